"""Clustering quality over the non-sensitive data ``X``: CO, SH, DevO and DevC.

DevC and DevO compare the clustering with a reference clustering, for instance
S-blind K-Means.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist
from sklearn.metrics import silhouette_score
from sklearn.utils import check_scalar

from ._checks import check_reference, check_X, encode_labels
from ._docstrings import fill_docstring

__all__ = [
    "centroid_deviation",
    "clustering_objective",
    "object_pair_deviation",
    "silhouette",
]


@fill_docstring
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
    %(X)s
    %(labels)s
    squared : bool, default=True
        Sum squared (``True``) or plain (``False``) Euclidean distances.

    Returns
    -------
    float
        Lower is more coherent.
    """
    codes, n_clusters = encode_labels(labels)
    X = check_X(X, codes.shape[0])
    centers = _centroids(X, codes, n_clusters)
    residuals = X - centers[codes]
    per_point = np.einsum("ij,ij->i", residuals, residuals)
    return float(per_point.sum() if squared else np.sqrt(per_point).sum())


def _centroids(X, codes, n_clusters):
    n = codes.shape[0]
    indicator = sparse.csr_array((np.ones(n), (codes, np.arange(n))), shape=(n_clusters, n))
    sizes = np.bincount(codes, minlength=n_clusters)
    return (indicator @ X) / sizes[:, None]


@fill_docstring
def silhouette(X, labels, *, sample_size=None, random_state=None):
    """Mean silhouette coefficient (SH), Euclidean, via scikit-learn.

    Delegates to :func:`sklearn.metrics.silhouette_score`. The exact score
    costs O(n_samples^2) distance evaluations; at 10^5 points and beyond pass
    ``sample_size`` to score a random subset instead.

    Parameters
    ----------
    %(X)s
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
    codes, n_clusters = encode_labels(labels)
    X = check_X(X, codes.shape[0])
    n = codes.shape[0]
    if not 2 <= n_clusters <= n - 1:
        raise ValueError(
            "silhouette needs between 2 and n_samples - 1 distinct labels, got "
            f"{n_clusters} distinct label(s) for n_samples={n}."
        )
    if sample_size is not None:
        check_scalar(sample_size, "sample_size", numbers.Integral, min_val=2)
    return float(silhouette_score(X, codes, sample_size=sample_size, random_state=random_state))


@fill_docstring
def object_pair_deviation(labels, reference_labels):
    r"""Object pair-wise deviation (DevO) between two clusterings.

    The paper's wording: "the fraction of object pairs from X where the
    same/different verdicts from the two clusterings disagree". With the
    contingency table :math:`n_{ij}` (points in cluster *i* of ``labels`` and
    *j* of ``reference_labels``), row sums :math:`a_i` and column sums
    :math:`b_j`,

    .. math::

        DevO = \frac{\sum_i \binom{a_i}{2} + \sum_j \binom{b_j}{2}
                     - 2 \sum_{ij} \binom{n_{ij}}{2}}{\binom{n}{2}}
             = 1 - \mathrm{RandIndex},

    computed in O(n + k_1 k_2) without visiting pairs. It is symmetric,
    invariant to renaming clusters, and 0 exactly when both define the same
    partition. With a single point there is no pair and DevO is 0.

    Parameters
    ----------
    %(labels)s
    %(reference_labels)s

    Returns
    -------
    float
        In [0, 1]; lower means closer to the reference.
    """
    codes, k1 = encode_labels(labels)
    ref, k2 = check_reference(reference_labels, codes.shape[0])
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


@fill_docstring
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

        DevC = \min_{\pi} \Big( \sum_{i \text{ matched}} \lVert \mu_i - \nu_{\pi(i)} \rVert
               + \sum_{i \text{ unmatched}} \min_j \lVert \mu_i - \nu_j \rVert \Big).

    Unequal numbers of clusters: the smaller clustering's centroids are all
    matched; each centroid left over in the larger one adds its distance to
    the nearest centroid of the other clustering, and the matching minimises
    the total including these terms. So DevC is symmetric, invariant to
    renaming clusters, and 0 exactly when the two sets of centroids coincide
    (in particular for identical clusterings).

    Parameters
    ----------
    %(X)s
    %(labels)s
    %(reference_labels)s

    Returns
    -------
    float
        In units of ``X``; lower means closer to the reference.
    """
    codes, k1 = encode_labels(labels)
    ref, k2 = check_reference(reference_labels, codes.shape[0])
    X = check_X(X, codes.shape[0])
    dist = cdist(_centroids(X, codes, k1), _centroids(X, ref, k2))
    if k1 < k2:
        dist = dist.T
    # Padding columns let a leftover centroid go unmatched at the cost of its
    # nearest distance, which keeps the optimum a single assignment problem.
    extra = dist.shape[0] - dist.shape[1]
    padded = np.hstack([dist, np.repeat(dist.min(axis=1, keepdims=True), extra, axis=1)])
    rows, cols = linear_sum_assignment(padded)
    return float(padded[rows, cols].sum())
