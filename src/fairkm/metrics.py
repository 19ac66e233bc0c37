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
  :func:`average_wasserstein` (AW), :func:`max_wasserstein` (MW);
- from other fair-clustering work: :func:`balance` (Chierichetti et al.),
  :func:`kl_fairness_error` (Ziko et al.) and
  :func:`max_proportional_violation` (Bera et al.).

:func:`fairness_report` and :func:`clustering_report` compute them in one call.

Clusters are the distinct values that occur in ``labels``: any values
(integers with gaps, negative integers, strings) are accepted, and a cluster
that no point belongs to is ignored by every measure. Weighted means give it
weight zero anyway, and maxima, minima and sums run over the non-empty clusters
only, because the distribution of an attribute in an empty cluster is
undefined (the FairKM objective drops empty clusters for the same reason).
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist
from sklearn.metrics import silhouette_score
from sklearn.utils import check_array, check_scalar

from fairkm._encoding import (
    CATEGORICAL,
    check_sensitive_features,
    standardize_numeric,
)

__all__ = [
    "average_euclidean",
    "average_wasserstein",
    "balance",
    "centroid_deviation",
    "clustering_objective",
    "clustering_report",
    "fairness_report",
    "kl_fairness_error",
    "max_euclidean",
    "max_proportional_violation",
    "max_wasserstein",
    "object_pair_deviation",
    "published_wasserstein",
    "silhouette",
]

_MULTIOUTPUT = ("raw_values", "uniform_average")
_WASSERSTEIN = ("principled", "published")


# --------------------------------------------------------------------------- validation


def _encode_labels(labels, name="labels"):
    """Validate cluster labels and map them to codes 0..n_clusters-1 (sorted by value).

    Returns
    -------
    codes : ndarray of shape (n_samples,), int64
    n_clusters : int
        Number of distinct labels, i.e. of non-empty clusters.
    """
    arr = check_array(labels, ensure_2d=False, dtype=None, input_name=name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}.")
    codes, uniques = pd.factorize(arr, sort=True)
    if codes.min() < 0:
        # check_array lets None through in object arrays; factorize marks it with -1.
        i = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"{name} has a missing value ({arr[i]!r}) at position {i}.")
    return codes.astype(np.int64, copy=False), len(uniques)


def _check_X(X, n_labels):
    X = check_array(X, dtype=np.float64, input_name="X")
    if X.shape[0] != n_labels:
        raise ValueError(
            f"X has {X.shape[0]} samples but labels has {n_labels} entries; "
            "they must have the same length."
        )
    return X


def _check_reference(reference_labels, n_samples):
    codes, n_clusters = _encode_labels(reference_labels, name="reference_labels")
    if codes.shape[0] != n_samples:
        raise ValueError(
            f"reference_labels has {codes.shape[0]} entries but labels has {n_samples}; "
            "they must have the same length."
        )
    return codes, n_clusters


def _prepare_fairness(labels, sensitive_features, numeric_sensitive):
    codes, n_clusters = _encode_labels(labels)
    # The length is checked here rather than through n_samples= so that the
    # message names labels, not X.
    sf = check_sensitive_features(sensitive_features, numeric=numeric_sensitive)
    if sf.n_samples != codes.shape[0]:
        raise ValueError(
            f"sensitive_features has {sf.n_samples} rows but labels has {codes.shape[0]} "
            "entries; they must have the same length."
        )
    return codes, n_clusters, sf


def _check_option(value, name, allowed):
    if not isinstance(value, str) or value not in allowed:
        options = " or ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be {options}, got {value!r}.")


def _check_eps(eps):
    check_scalar(eps, "eps", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="both")


def _check_delta(delta):
    check_scalar(delta, "delta", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="left")


# --------------------------------------------------------------------------- per-cluster pieces


def _contingency(codes, n_clusters, values, n_values):
    """Count the points per (cluster, value): one bincount over combined codes."""
    flat = np.bincount(codes * n_values + values, minlength=n_clusters * n_values)
    return flat.reshape(n_clusters, n_values)


def _cluster_proportions(counts):
    """Cluster sizes, per-cluster value proportions and the dataset's proportions."""
    sizes = counts.sum(axis=1)
    totals = counts.sum(axis=0)
    return sizes, counts / sizes[:, None], totals / sizes.sum()


def _categorical_euclidean(counts):
    _, props, overall = _cluster_proportions(counts)
    diff = props - overall
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def _categorical_wasserstein(counts, convention):
    _, props, overall = _cluster_proportions(counts)
    if convention == "published":
        return _sorted_w1(props, overall)
    # Optimal transport under the 0/1 ground metric moves exactly the mass in excess.
    return 0.5 * np.abs(props - overall).sum(axis=1)


def _sorted_w1(p, q):
    """W1 between the entries of ``p`` (rows) and of ``q``, taken as equal-size samples."""
    # For two samples of the same size with uniform weights, the optimal 1-D
    # coupling pairs order statistics.
    return np.abs(np.sort(p, axis=-1) - np.sort(q, axis=-1)).mean(axis=-1)


def _standardized(sf, j):
    values = sf.columns[j]
    mean, scale = standardize_numeric(values, sf.names[j])
    return (values - mean) / scale


def _numeric_euclidean(codes, n_clusters, z):
    sizes = np.bincount(codes, minlength=n_clusters)
    means = np.bincount(codes, weights=z, minlength=n_clusters) / sizes
    return np.abs(means - z.mean())


def _numeric_wasserstein(codes, n_clusters, z):
    """1-D W1 between each cluster's values and all values, for all clusters at once.

    W1 is the integral of |F_c - F| over the line. Both CDFs are constant between
    consecutive sorted values, so with sorted values v_0 <= ... <= v_{n-1},
    widths w_i = v_{i+1} - v_i and the dataset CDF G_i = (i + 1) / n on
    [v_i, v_{i+1}), W1_c = sum_i w_i |F_c,i - G_i|. Along the sorted order, F_c
    is m / n_c between the m-th and (m+1)-th point of cluster c, so the sum
    splits into n + n_clusters segments of constant F_c. G increases, so each
    segment splits once more where G crosses F_c, and both halves are
    differences of prefix sums of w and w * G. Cost: two sorts, then O(n),
    independent of the number of clusters.
    """
    n = z.shape[0]
    # Tied values sit between zero-width steps, so their relative order is irrelevant.
    order = np.argsort(z)
    widths = np.diff(z[order])
    cum_w = np.concatenate(([0.0], np.cumsum(widths)))
    cum_wg = np.concatenate(([0.0], np.cumsum(widths * (np.arange(1, n) / n))))

    sorted_codes = codes[order]
    sizes = np.bincount(codes, minlength=n_clusters)
    # Sorted positions grouped by cluster, increasing within each cluster.
    # The narrowest unsigned type lets numpy use its radix sort (up to 16 bits).
    key = sorted_codes.astype(np.min_scalar_type(n_clusters - 1))
    by_cluster = np.argsort(key, kind="stable")
    owner = sorted_codes[by_cluster]
    # Per cluster c, the segment bounds are [0, q_1, ..., q_{n_c}, n - 1] where
    # q_m is the sorted position of its m-th point; they occupy n_c + 2 slots.
    first_slot = np.concatenate(([0], np.cumsum(sizes + 2)[:-1]))
    last_slot = first_slot + sizes + 1
    bounds = np.empty(n + 2 * n_clusters, dtype=np.int64)
    bounds[first_slot] = 0
    bounds[last_slot] = n - 1
    bounds[np.arange(n) + 1 + 2 * owner] = by_cluster
    not_last = np.ones(bounds.shape[0], dtype=bool)
    not_last[last_slot] = False
    not_first = np.ones(bounds.shape[0], dtype=bool)
    not_first[first_slot] = False
    lo, hi = bounds[not_last], bounds[not_first]

    segment_cluster = np.repeat(np.arange(n_clusters), sizes + 1)
    seg_size = sizes[segment_cluster]
    m = np.arange(n + n_clusters) - np.repeat(first_slot - np.arange(n_clusters), sizes + 1)
    f = m / seg_size
    # G_i >= m / n_c  <=>  i >= ceil(m n / n_c) - 1, in exact integer arithmetic.
    split = np.clip(-((-m * n) // seg_size) - 1, lo, hi)
    below = f * (cum_w[split] - cum_w[lo]) - (cum_wg[split] - cum_wg[lo])
    above = (cum_wg[hi] - cum_wg[split]) - f * (cum_w[hi] - cum_w[split])
    w1 = np.bincount(segment_cluster, weights=below + above, minlength=n_clusters)
    # Prefix-sum differences can leave a rounding residue just below zero.
    return np.maximum(w1, 0.0)


def _size_weighted_mean(sizes, per_cluster):
    return float(np.dot(sizes, per_cluster) / sizes.sum())


def _balance(counts):
    return float((counts.min(axis=1) / counts.max(axis=1)).min())


def _kl_error(counts, eps):
    _, props, overall = _cluster_proportions(counts)
    # With eps == 0 a value missing from a cluster gives log(0) = -inf, hence an
    # infinite (and correct) divergence; silence only that division warning.
    with np.errstate(divide="ignore"):
        terms = overall * (np.log(overall) - np.log(np.maximum(props, eps)))
    return float(terms.sum())


def _proportional_violation(counts, delta):
    _, props, overall = _cluster_proportions(counts)
    upper = overall / (1.0 - delta)
    lower = overall * (1.0 - delta)
    return float(np.maximum(np.maximum(props - upper, lower - props), 0.0).max())


# --------------------------------------------------------------------------- quality


def clustering_objective(X, labels, *, squared=True):
    r"""Clustering objective (CO): total distance of the points to their cluster mean.

    .. math::

        CO = \sum_{C} \sum_{x \in C} \lVert x - \mu_C \rVert^{p},
        \qquad p = 2 \text{ if squared else } 1,

    where :math:`\mu_C` is the mean of cluster :math:`C`. ``squared=True`` is
    the K-Means objective (the paper's Eq. 1 with a squared Euclidean
    ``dist_N``; KMeans' ``inertia_`` for the same labels and centers).
    ``squared=False`` sums unsquared Euclidean distances, the convention behind
    the paper's published CO values.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-sensitive data.
    labels : array-like of shape (n_samples,)
        Cluster labels.
    squared : bool, default=True
        Sum squared (``True``) or plain (``False``) Euclidean distances.

    Returns
    -------
    float
        Lower is more coherent.
    """
    codes, n_clusters = _encode_labels(labels)
    X = _check_X(X, codes.shape[0])
    centers = _centroids(X, codes, n_clusters)
    residuals = X - centers[codes]
    per_point = np.einsum("ij,ij->i", residuals, residuals)
    return float(per_point.sum() if squared else np.sqrt(per_point).sum())


def _centroids(X, codes, n_clusters):
    n = codes.shape[0]
    indicator = sparse.csr_array((np.ones(n), (codes, np.arange(n))), shape=(n_clusters, n))
    sizes = np.bincount(codes, minlength=n_clusters)
    return (indicator @ X) / sizes[:, None]


def silhouette(X, labels, *, sample_size=None, random_state=None):
    """Mean silhouette coefficient (SH), Euclidean, via scikit-learn.

    Delegates to :func:`sklearn.metrics.silhouette_score`. The exact score
    costs O(n_samples^2) distance evaluations; at 10^5 points and beyond pass
    ``sample_size`` to score a random subset instead.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-sensitive data.
    labels : array-like of shape (n_samples,)
        Cluster labels; between 2 and n_samples - 1 distinct values.
    sample_size : int, default=None
        Number of points drawn without replacement to compute the score on;
        ``None`` uses every point.
    random_state : int, RandomState instance or None, default=None
        Seeds the subset drawn when ``sample_size`` is given.

    Returns
    -------
    float
        In [-1, 1]; higher means better separated clusters.
    """
    codes, n_clusters = _encode_labels(labels)
    X = _check_X(X, codes.shape[0])
    n = codes.shape[0]
    if not 2 <= n_clusters <= n - 1:
        raise ValueError(
            "silhouette needs between 2 and n_samples - 1 distinct labels, got "
            f"{n_clusters} distinct label(s) for n_samples={n}."
        )
    if sample_size is not None:
        check_scalar(sample_size, "sample_size", numbers.Integral, min_val=2)
    return float(silhouette_score(X, codes, sample_size=sample_size, random_state=random_state))


def object_pair_deviation(labels, reference_labels):
    r"""Object pair-wise deviation (DevO) between two clusterings.

    The paper's wording: "the fraction of object pairs from X where the
    same/different verdicts from the two clusterings disagree". With the
    contingency table :math:`n_{ij}` (points in cluster *i* of ``labels`` and
    *j* of ``reference_labels``), row sums :math:`a_i` and column sums
    :math:`b_j`,

    .. math::

        DevO = \frac{\sum_i \binom{a_i}{2} + \sum_j \binom{b_j}{2}
                     - 2 \sum_{ij} \binom{n_{ij}{2}{\binom{n}{2}
             = 1 - \mathrm{RandIndex},

    computed in O(n + k_1 k_2) without visiting pairs. It is symmetric,
    invariant to renaming clusters, and 0 exactly when both define the same
    partition. With a single point there is no pair and DevO is 0.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    reference_labels : array-like of shape (n_samples,)
        Labels of the reference clustering (e.g. S-blind K-Means).

    Returns
    -------
    float
        In [0, 1]; lower means closer to the reference.
    """
    codes, k1 = _encode_labels(labels)
    ref, k2 = _check_reference(reference_labels, codes.shape[0])
    n = codes.shape[0]
    if n < 2:
        return 0.0
    combined = codes * k2 + ref
    if k1 * k2 <= 2 * n + 1024:
        joint = np.bincount(combined, minlength=k1 * k2)
    else:
        # Many clusters on both sides: a dense table would dwarf the data, so
        # count only the occupied cells.
        _, joint = np.unique(combined, return_counts=True)
    # sum_x C(x, 2) = (sum_x x^2 - n) / 2; Python ints keep the sums exact.
    same_a = (int(np.dot(np.bincount(codes), np.bincount(codes))) - n) // 2
    same_b = (int(np.dot(np.bincount(ref), np.bincount(ref))) - n) // 2
    same_both = (int(np.dot(joint, joint)) - n) // 2
    return (same_a + same_b - 2 * same_both) / (n * (n - 1) // 2)


def centroid_deviation(X, labels, reference_labels):
    r"""Centroid-based deviation (DevC): distance between optimally matched centroids.

    The paper describes DevC as "the sum of pair-wise dot-products between
    centroid pairs, each pair constructed using one centroid from the fair
    clustering and one from the S-blind clustering". A sum of dot products is
    a similarity, not a deviation, yet the paper reports 0.0 for K-Means
    against itself. This function uses a definition with that property: the
    centroids of the two clusterings (over ``X``) are matched one-to-one by the
    Hungarian algorithm (:func:`scipy.optimize.linear_sum_assignment`) so as to
    minimise the sum of Euclidean distances between matched pairs:

    .. math::

        DevC = \min_{\pi} \Big( \sum_{i \text{ matched} \lVert \mu_i - \nu_{\pi(i)} \rVert
               + \sum_{i \text{ unmatched} \min_j \lVert \mu_i - \nu_j \rVert \Big).

    Unequal numbers of clusters: the smaller clustering's centroids are all
    matched; each centroid left over in the larger one adds its distance to
    the nearest centroid of the other clustering, and the matching minimises
    the total including these terms. So DevC is symmetric, invariant to
    renaming clusters, and 0 exactly when the two sets of centroids coincide
    (in particular for identical clusterings).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-sensitive data the centroids are computed on.
    labels : array-like of shape (n_samples,)
        Cluster labels.
    reference_labels : array-like of shape (n_samples,)
        Labels of the reference clustering.

    Returns
    -------
    float
        In units of ``X``; lower means closer to the reference.
    """
    codes, k1 = _encode_labels(labels)
    ref, k2 = _check_reference(reference_labels, codes.shape[0])
    X = _check_X(X, codes.shape[0])
    dist = cdist(_centroids(X, codes, k1), _centroids(X, ref, k2))
    if k1 < k2:
        dist = dist.T
    # Padding columns let a leftover centroid go unmatched at the cost of its
    # nearest distance, which keeps the optimum a single assignment problem.
    extra = dist.shape[0] - dist.shape[1]
    padded = np.hstack([dist, np.repeat(dist.min(axis=1, keepdims=True), extra, axis=1)])
    rows, cols = linear_sum_assignment(padded)
    return float(padded[rows, cols].sum())


# --------------------------------------------------------------------------- fairness


def _attribute_scores(
    labels, sensitive_features, numeric_sensitive, multioutput, measure, *, categorical, numeric
):
    """Apply a measure to each attribute and aggregate as ``multioutput`` says.

    ``categorical(counts, sizes)`` and ``numeric(codes, n_clusters, z, sizes)``
    return one float; ``numeric=None`` marks a measure defined for categorical
    attributes only (NaN for numeric ones).
    """
    _check_option(multioutput, "multioutput", _MULTIOUTPUT)
    codes, n_clusters, sf = _prepare_fairness(labels, sensitive_features, numeric_sensitive)
    sizes = np.bincount(codes, minlength=n_clusters)
    scores = np.full(sf.n_attributes, np.nan)
    for j, kind in enumerate(sf.kinds):
        if kind == CATEGORICAL:
            counts = _contingency(codes, n_clusters, sf.columns[j], len(sf.categories[j]))
            scores[j] = categorical(counts, sizes)
        elif numeric is not None:
            scores[j] = numeric(codes, n_clusters, _standardized(sf, j), sizes)
    if numeric is None and np.isnan(scores).all():
        raise ValueError(
            f"{measure} is defined for categorical sensitive attributes only, and every "
            f"attribute is numeric: {sf.names}. Bin them, or pass numeric_sensitive=False."
        )
    if multioutput == "raw_values":
        return scores
    return float(np.nanmean(scores))


def average_euclidean(
    labels, *, sensitive_features, numeric_sensitive="auto", multioutput="uniform_average"
):
    r"""Average Euclidean fairness deviation (AE).

    For a categorical attribute S with dataset distribution :math:`X_S` and
    cluster distributions :math:`C_S` over its values,

    .. math::

        AE_S = \frac{\sum_C |C| \, \lVert C_S - X_S \rVert_2}{\sum_C |C|},

    the paper's cluster-cardinality weighted average. For a numeric attribute
    the cluster-level deviation is :math:`|\bar z_C - \bar z|`, the gap between
    the cluster's and the dataset's mean of the standardised values (the
    quantity the FairKM objective penalises for numeric attributes), in
    standard deviations.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric: ``"auto"`` treats float columns as
        numeric and all others as categorical, ``True``/``False`` makes every
        attribute numeric/categorical, and a list names (or gives the
        positions of) the numeric attributes.
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        ``"uniform_average"``: the mean over attributes (the paper's "mean
        across S attributes"); ``"raw_values"``: one value per attribute.

    Returns
    -------
    float or ndarray of shape (n_attributes,)
        0 when every cluster has the dataset's mix; lower is fairer.
    """
    return _attribute_scores(
        labels,
        sensitive_features,
        numeric_sensitive,
        multioutput,
        "average_euclidean",
        categorical=lambda counts, sizes: _size_weighted_mean(
            sizes, _categorical_euclidean(counts)
        ),
        numeric=lambda codes, k, z, sizes: _size_weighted_mean(
            sizes, _numeric_euclidean(codes, k, z)
        ),
    )


def max_euclidean(
    labels, *, sensitive_features, numeric_sensitive="auto", multioutput="uniform_average"
):
    r"""Maximum Euclidean fairness deviation (ME).

    .. math::

        ME_S = \max_C \lVert C_S - X_S \rVert_2

    over the non-empty clusters: the skew of the least representative
    cluster. Numeric attributes use :math:`|\bar z_C - \bar z|` as in
    :func:`average_euclidean`.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric: ``"auto"`` treats float columns as
        numeric and all others as categorical, ``True``/``False`` makes every
        attribute numeric/categorical, and a list names (or gives the
        positions of) the numeric attributes.
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        ``"uniform_average"``: the mean over attributes (the paper's "mean
        across S attributes"); ``"raw_values"``: one value per attribute.

    Returns
    -------
    float or ndarray of shape (n_attributes,)
        Lower is fairer.
    """
    return _attribute_scores(
        labels,
        sensitive_features,
        numeric_sensitive,
        multioutput,
        "max_euclidean",
        categorical=lambda counts, sizes: float(_categorical_euclidean(counts).max()),
        numeric=lambda codes, k, z, sizes: float(_numeric_euclidean(codes, k, z).max()),
    )


def average_wasserstein(
    labels,
    *,
    sensitive_features,
    numeric_sensitive="auto",
    wasserstein="principled",
    multioutput="uniform_average",
):
    r"""Average Wasserstein fairness deviation (AW).

    .. math::

        AW_S = \frac{\sum_C |C| \, W(C_S, X_S)}{\sum_C |C|}

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric: ``"auto"`` treats float columns as
        numeric and all others as categorical, ``True``/``False`` makes every
        attribute numeric/categorical, and a list names (or gives the
        positions of) the numeric attributes.
    wasserstein : {"principled", "published"}, default="principled"
        Wasserstein convention for categorical attributes; see Notes.
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        ``"uniform_average"``: the mean over attributes (the paper's "mean
        across S attributes"); ``"raw_values"``: one value per attribute.

    Returns
    -------
    float or ndarray of shape (n_attributes,)
        Lower is fairer.

    Notes
    -----
    The paper computes AW/MW "using Wasserstein distance in lieu of
    Euclidean" without fixing the ground metric. With
    ``wasserstein="principled"`` a categorical attribute uses optimal transport
    under the 0/1 ground metric (moving mass between any two distinct values
    costs 1), which equals the total variation distance
    :math:`\tfrac12 \sum_s |C_S(s) - X_S(s)|`, in [0, 1]. A numeric
    attribute uses the 1-D Wasserstein-1 distance between the cluster's and
    the dataset's empirical distributions of the standardised values.

    ``wasserstein="published"`` reproduces the convention behind the paper's
    published tables: the two probability vectors are passed to
    :func:`scipy.stats.wasserstein_distance` as samples (see
    :func:`published_wasserstein`), which ignores which value each
    probability belongs to. Numeric attributes are unaffected: their values
    already are samples.
    """
    _check_option(wasserstein, "wasserstein", _WASSERSTEIN)
    return _attribute_scores(
        labels,
        sensitive_features,
        numeric_sensitive,
        multioutput,
        "average_wasserstein",
        categorical=lambda counts, sizes: _size_weighted_mean(
            sizes, _categorical_wasserstein(counts, wasserstein)
        ),
        numeric=lambda codes, k, z, sizes: _size_weighted_mean(
            sizes, _numeric_wasserstein(codes, k, z)
        ),
    )


def max_wasserstein(
    labels,
    *,
    sensitive_features,
    numeric_sensitive="auto",
    wasserstein="principled",
    multioutput="uniform_average",
):
    r"""Maximum Wasserstein fairness deviation (MW).

    .. math::

        MW_S = \max_C W(C_S, X_S)

    over the non-empty clusters.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric: ``"auto"`` treats float columns as
        numeric and all others as categorical, ``True``/``False`` makes every
        attribute numeric/categorical, and a list names (or gives the
        positions of) the numeric attributes.
    wasserstein : {"principled", "published"}, default="principled"
        Wasserstein convention for categorical attributes; see Notes.
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        ``"uniform_average"``: the mean over attributes (the paper's "mean
        across S attributes"); ``"raw_values"``: one value per attribute.

    Returns
    -------
    float or ndarray of shape (n_attributes,)
        Lower is fairer.

    Notes
    -----
    The paper computes AW/MW "using Wasserstein distance in lieu of
    Euclidean" without fixing the ground metric. With
    ``wasserstein="principled"`` a categorical attribute uses optimal transport
    under the 0/1 ground metric (moving mass between any two distinct values
    costs 1), which equals the total variation distance
    :math:`\tfrac12 \sum_s |C_S(s) - X_S(s)|`, in [0, 1]. A numeric
    attribute uses the 1-D Wasserstein-1 distance between the cluster's and
    the dataset's empirical distributions of the standardised values.

    ``wasserstein="published"`` reproduces the convention behind the paper's
    published tables: the two probability vectors are passed to
    :func:`scipy.stats.wasserstein_distance` as samples (see
    :func:`published_wasserstein`), which ignores which value each
    probability belongs to. Numeric attributes are unaffected: their values
    already are samples.
    """
    _check_option(wasserstein, "wasserstein", _WASSERSTEIN)
    return _attribute_scores(
        labels,
        sensitive_features,
        numeric_sensitive,
        multioutput,
        "max_wasserstein",
        categorical=lambda counts, sizes: float(
            _categorical_wasserstein(counts, wasserstein).max()
        ),
        numeric=lambda codes, k, z, sizes: float(_numeric_wasserstein(codes, k, z).max()),
    )


def published_wasserstein(p, q):
    """Wasserstein distance between two probability vectors, the published way.

    The FairKM paper's AW/MW values were computed as
    ``scipy.stats.wasserstein_distance(p, q)``: the entries of the two
    probability vectors are treated as two samples of numbers, so the result
    depends only on the sorted entries, not on which value each probability
    belongs to. For equal lengths this is the mean absolute difference of the
    sorted entries. Kept so published tables can be compared like for like;
    :func:`average_wasserstein` with ``wasserstein="principled"`` is the
    measure to use otherwise.

    Parameters
    ----------
    p, q : array-like of shape (n_values,)
        Two probability vectors over the same values.

    Returns
    -------
    float
    """
    p = check_array(p, ensure_2d=False, dtype=np.float64, input_name="p")
    q = check_array(q, ensure_2d=False, dtype=np.float64, input_name="q")
    if p.ndim != 1 or p.shape != q.shape:
        raise ValueError(
            f"p and q must be 1-D of the same length, got shapes {p.shape} and {q.shape}."
        )
    return float(_sorted_w1(p, q))


def balance(labels, *, sensitive_features, numeric_sensitive="auto", multioutput="uniform_average"):
    r"""Balance of Chierichetti et al. (2017), generalised to multi-valued attributes.

    For a binary attribute Chierichetti et al. define the balance of a cluster
    as :math:`\min(r/b, b/r)` for its counts *r* and *b* of the two groups,
    and the balance of a clustering as the minimum over clusters. With *t*
    values the cluster's balance is the smallest ratio between the counts of
    any two values, i.e. the smallest count over the largest, and the
    clustering's is the minimum over the non-empty clusters (the
    generalisation used by Ziko et al., 2019):

    .. math::

        balance_S = \min_C \frac{\min_s |C \cap S_s|}{\max_s |C \cap S_s|},

    where *s* ranges over the values observed in the dataset, so a cluster
    missing one of them has balance 0. It is at most the dataset's own
    min/max ratio, and equal to 1 for an attribute with a single observed
    value. Not defined for numeric attributes (NaN under
    ``multioutput="raw_values"``, skipped in the average).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric: ``"auto"`` treats float columns as
        numeric and all others as categorical, ``True``/``False`` makes every
        attribute numeric/categorical, and a list names (or gives the
        positions of) the numeric attributes.
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        ``"uniform_average"``: the mean over attributes (the paper's "mean
        across S attributes"); ``"raw_values"``: one value per attribute.

    Returns
    -------
    float or ndarray of shape (n_attributes,)
        In [0, 1]; higher is fairer.
    """
    return _attribute_scores(
        labels,
        sensitive_features,
        numeric_sensitive,
        multioutput,
        "balance",
        categorical=lambda counts, sizes: _balance(counts),
        numeric=None,
    )


def kl_fairness_error(
    labels,
    *,
    sensitive_features,
    numeric_sensitive="auto",
    eps=1e-20,
    multioutput="uniform_average",
):
    r"""Fairness error of Ziko et al. (2019): summed KL divergence to the dataset's mix.

    .. math::

        KL_S = \sum_C \sum_s X_S(s) \log \frac{X_S(s)}{\max(C_S(s), \epsilon)}

    over the non-empty clusters, with natural logarithms. Every value *s*
    is observed in the dataset, so :math:`X_S(s) > 0`; a value absent from a
    cluster would make the divergence infinite, and like Ziko et al.'s
    evaluation code the cluster proportions are floored at ``eps`` (each such
    value then adds :math:`X_S(s) \log(X_S(s)/\epsilon)`, about
    :math:`46 X_S(s)` for the default). ``eps=0`` gives the exact divergence,
    ``inf`` when a value is missing from a cluster. Not defined for numeric
    attributes (NaN under ``multioutput="raw_values"``, skipped in the
    average).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric: ``"auto"`` treats float columns as
        numeric and all others as categorical, ``True``/``False`` makes every
        attribute numeric/categorical, and a list names (or gives the
        positions of) the numeric attributes.
    eps : float, default=1e-20
        Floor applied to the cluster proportions, in [0, 1].
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        ``"uniform_average"``: the mean over attributes (the paper's "mean
        across S attributes"); ``"raw_values"``: one value per attribute.

    Returns
    -------
    float or ndarray of shape (n_attributes,)
        Non-negative; 0 when every cluster has the dataset's mix.
    """
    _check_eps(eps)
    return _attribute_scores(
        labels,
        sensitive_features,
        numeric_sensitive,
        multioutput,
        "kl_fairness_error",
        categorical=lambda counts, sizes: _kl_error(counts, eps),
        numeric=None,
    )


def max_proportional_violation(
    labels,
    *,
    sensitive_features,
    numeric_sensitive="auto",
    delta=0.2,
    multioutput="uniform_average",
):
    r"""Maximum proportional violation of the fairness bounds of Bera et al. (2019).

    Bera et al. require every cluster to hold each group *s* in a proportion
    between :math:`\beta_s = (1 - \delta) X_S(s)` and
    :math:`\alpha_s = X_S(s) / (1 - \delta)`. The violation of a cluster and
    value is how far its proportion lies outside that band, and the measure is
    the largest over non-empty clusters and values:

    .. math::

        MPV_S = \max_{C, s} \max\big(0,\; C_S(s) - \alpha_s,\;
                \beta_s - C_S(s)\big).

    It is 0 when every cluster satisfies the bounds; with ``delta=0`` it is
    the largest absolute gap :math:`|C_S(s) - X_S(s)|`. Not defined for
    numeric attributes (NaN under ``multioutput="raw_values"``, skipped in the
    average).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric: ``"auto"`` treats float columns as
        numeric and all others as categorical, ``True``/``False`` makes every
        attribute numeric/categorical, and a list names (or gives the
        positions of) the numeric attributes.
    delta : float, default=0.2
        Slack of the bounds, in [0, 1); Bera et al.'s experiments use 0.2.
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        ``"uniform_average"``: the mean over attributes (the paper's "mean
        across S attributes"); ``"raw_values"``: one value per attribute.

    Returns
    -------
    float or ndarray of shape (n_attributes,)
        In proportion units; lower is fairer.
    """
    _check_delta(delta)
    return _attribute_scores(
        labels,
        sensitive_features,
        numeric_sensitive,
        multioutput,
        "max_proportional_violation",
        categorical=lambda counts, sizes: _proportional_violation(counts, delta),
        numeric=None,
    )


# --------------------------------------------------------------------------- reports


_REPORT_COLUMNS = ["AE", "AW", "ME", "MW", "balance", "KL", "MPV"]


def fairness_report(
    labels,
    *,
    sensitive_features,
    numeric_sensitive="auto",
    wasserstein="principled",
    eps=1e-20,
    delta=0.2,
):
    """Every fairness measure for every sensitive attribute, plus their mean.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Cluster labels.
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
        One column per sensitive attribute.
    numeric_sensitive : "auto", bool or list of str or int, default="auto"
        Which attributes are numeric; ``"auto"`` treats float columns as
        numeric and all others as categorical.
    wasserstein : {"principled", "published"}, default="principled"
        Convention for AW/MW on categorical attributes; see
        :func:`average_wasserstein`.
    eps : float, default=1e-20
        Floor on cluster proportions for KL; see :func:`kl_fairness_error`.
    delta : float, default=0.2
        Slack of the bounds for MPV; see :func:`max_proportional_violation`.

    Returns
    -------
    pandas.DataFrame
        One row per attribute (indexed by name) and a last row ``"mean"``
        with the mean over attributes (the paper's "mean across S
        attributes"). Columns: ``AE`` (:func:`average_euclidean`), ``AW``
        (:func:`average_wasserstein`), ``ME`` (:func:`max_euclidean`), ``MW``
        (:func:`max_wasserstein`), ``balance`` (:func:`balance`), ``KL``
        (:func:`kl_fairness_error`) and ``MPV``
        (:func:`max_proportional_violation`). ``balance``, ``KL`` and ``MPV``
        are NaN for numeric attributes and their mean runs over the
        categorical ones.

    Notes
    -----
    Each categorical attribute costs one ``np.bincount`` over the combined
    (cluster, value) codes, and every measure then reads the small
    n_clusters x n_values table. Each numeric attribute costs one sort.

    Examples
    --------
    >>> from fairkm.metrics import fairness_report
    >>> report = fairness_report([0, 0, 1, 1], sensitive_features=[["a"], ["b"], ["a"], ["b"]])
    >>> report.loc["mean", ["AE", "balance"]].tolist()
    [0.0, 1.0]
    """
    _check_option(wasserstein, "wasserstein", _WASSERSTEIN)
    _check_eps(eps)
    _check_delta(delta)
    codes, n_clusters, sf = _prepare_fairness(labels, sensitive_features, numeric_sensitive)
    if "mean" in sf.names:
        raise ValueError(
            "sensitive_features has an attribute named 'mean', which would clash with the "
            "report's 'mean' row; rename it."
        )
    sizes = np.bincount(codes, minlength=n_clusters)
    table = np.full((sf.n_attributes, len(_REPORT_COLUMNS)), np.nan)
    for j, kind in enumerate(sf.kinds):
        if kind == CATEGORICAL:
            counts = _contingency(codes, n_clusters, sf.columns[j], len(sf.categories[j]))
            euclid = _categorical_euclidean(counts)
            wass = _categorical_wasserstein(counts, wasserstein)
            extra = [
                _balance(counts),
                _kl_error(counts, eps),
                _proportional_violation(counts, delta),
            ]
        else:
            z = _standardized(sf, j)
            euclid = _numeric_euclidean(codes, n_clusters, z)
            wass = _numeric_wasserstein(codes, n_clusters, z)
            extra = [np.nan] * 3
        table[j] = [
            _size_weighted_mean(sizes, euclid),
            _size_weighted_mean(sizes, wass),
            euclid.max(),
            wass.max(),
            *extra,
        ]
    index = pd.Index(sf.names, name="attribute")
    report = pd.DataFrame(table, index=index, columns=_REPORT_COLUMNS)
    report.loc["mean"] = report.mean(axis=0, skipna=True)
    return report


def clustering_report(
    X, labels, *, reference_labels=None, squared=True, sample_size=None, random_state=None
):
    """Clustering quality measures in one call.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-sensitive data.
    labels : array-like of shape (n_samples,)
        Cluster labels.
    reference_labels : array-like of shape (n_samples,), default=None
        Labels of a reference clustering, e.g. S-blind K-Means; adds DevC and
        DevO.
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
        ``DevO`` (:func:`object_pair_deviation`).

    Examples
    --------
    >>> from fairkm.metrics import clustering_report
    >>> X = [[0.0], [2.0], [10.0], [12.0]]
    >>> report = clustering_report(X, [0, 0, 1, 1], reference_labels=[1, 1, 0, 0])
    >>> report.round(4).to_dict()
    {'CO': 4.0, 'SH': 0.798, 'DevC': 0.0, 'DevO': 0.0}
    """
    values = {
        "CO": clustering_objective(X, labels, squared=squared),
        "SH": silhouette(X, labels, sample_size=sample_size, random_state=random_state),
    }
    if reference_labels is not None:
        values["DevC"] = centroid_deviation(X, labels, reference_labels)
        values["DevO"] = object_pair_deviation(labels, reference_labels)
    return pd.Series(values, dtype=np.float64)
