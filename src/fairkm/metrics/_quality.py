"""Clustering quality over the non-sensitive data ``X``: CO, SH, DevO and DevC.

DevC and DevO compare the clustering with a reference clustering, for instance
S-blind K-Means.

With sample weights a row of weight w counts as w rows: centroids are
weighted means, CO sums weighted distances, DevO counts weighted pairs and SH
averages weighted silhouettes. Rows of weight zero are dropped first and unit
weights take the unweighted paths, bit-identical to no weights.

A pandas ``X`` (or, with ``X`` an array, pandas ``labels``) gives the rows'
index: pandas labels, reference labels and weights are paired with it by
label (:class:`~fairkm.metrics._checks.Rows`).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist
from sklearn.metrics import silhouette_score
from sklearn.utils import check_random_state

from fairkm.utils._param_validation import at_least, check_param
from fairkm.utils._sums import weighted_sum
from fairkm.utils._threads import decided_pool_threads

from ._checks import Rows, check_reference, check_X, drop_zero_weights, encode_labels
from ._docstrings import fill_docstring

__all__ = [
    "centroid_deviation",
    "clustering_objective",
    "object_pair_deviation",
    "silhouette",
]


@fill_docstring
def clustering_objective(X, labels, *, sample_weight=None, squared=True):
    r"""Clustering objective (CO): total distance of the points to their cluster mean.

    .. math::

        CO = \sum_{C} \sum_{x \in C} \lVert x - \mu_C \rVert^{p},
        \qquad p = 2 \text{ if squared else } 1,

    where :math:`\mu_C` is the mean of cluster :math:`C`. ``squared=True`` is
    the K-Means objective (the paper's Eq. 1 with a squared Euclidean
    ``dist_N``; KMeans' ``inertia_`` for the same labels and centers).
    ``squared=False`` sums unsquared Euclidean distances, the convention behind
    the paper's published CO values. With ``sample_weight`` each term is
    multiplied by its row's weight and :math:`\mu_C` is the weighted mean
    (KMeans' ``inertia_`` fitted with the same weights).

    Parameters
    ----------
    %(X)s
    %(labels)s
    %(sample_weight)s
    squared : bool, default=True
        Sum squared (``True``) or plain (``False``) Euclidean distances.

    Returns
    -------
    float
        Lower is more coherent.
    """
    X, codes, n_clusters, weights = _prepare_rows(X, labels, sample_weight)
    centers = centroids(X, codes, n_clusters, weights)
    residuals = X - centers[codes]
    per_point = np.einsum("ij,ij->i", residuals, residuals)
    if weights is None:
        return float(per_point.sum() if squared else np.sqrt(per_point).sum())
    return weighted_sum(per_point if squared else np.sqrt(per_point), weights)


def centroids(X, codes, n_clusters, weights=None):
    """Each cluster's (weighted) mean row: shape (n_clusters, n_features), codes 0..k-1."""
    n = codes.shape[0]
    mass = np.ones(n) if weights is None else weights
    indicator = sparse.csr_array((mass, (codes, np.arange(n))), shape=(n_clusters, n))
    sizes = np.bincount(codes, weights=weights, minlength=n_clusters)
    return (indicator @ X) / sizes[:, None]


def _read(X, labels, sample_weight, reference_labels=None):
    """Pair the inputs with the rows; return ``(X, codes, reference, weights)`` checked.

    ``X`` and ``reference_labels`` may be None (not taken); ``reference`` is
    their codes; ``weights`` the user's (None for unit weights), all rows kept.
    """
    rows = Rows(("X", X), ("labels", labels))
    labels = rows.pair(labels, "labels")
    codes, _ = encode_labels(labels)
    ref = None
    if reference_labels is not None:
        ref, _ = check_reference(rows.pair(reference_labels, "reference_labels"),
                                 codes.shape[0])
    X = None if X is None else check_X(X, codes.shape[0])
    weights, _ = rows.weights(sample_weight, codes.shape[0])
    return X, codes, ref, weights


def _prepare_rows(X, labels, sample_weight):
    """``X``, cluster codes, their number and the weights, over the rows of positive weight."""
    X, codes, _, weights = _read(X, labels, sample_weight)
    weights, codes, n_clusters, X = drop_zero_weights(weights, codes, X)
    return X, codes, n_clusters, weights


def _prepare_pair(X, labels, reference_labels, sample_weight):
    """Encode two clusterings (and ``X`` unless None) over the rows of positive weight."""
    X, codes, ref, weights = _read(X, labels, sample_weight, reference_labels)
    kept, codes, k1 = drop_zero_weights(weights, codes)
    _, ref, k2 = drop_zero_weights(weights, ref)
    if X is not None and weights is not None:
        X = X[weights > 0]
    return X, codes, k1, ref, k2, kept


def _silhouette_undefined(codes, n_clusters, weights):
    """Why the silhouette of these (positive-weight) rows is undefined, or ``""``."""
    n = codes.shape[0] if weights is None else float(np.sum(weights))
    if 2 <= n_clusters <= n - 1:
        return ""
    size = f"n_samples={n}" if weights is None else f"a total sample_weight of {n!r}"
    bound = "n_samples - 1" if weights is None else "the total weight - 1"
    return (f"silhouette needs between 2 and {bound} distinct labels, got "
            f"{n_clusters} distinct label(s) for {size}.")


def silhouette_or_nan(X, labels, **kwargs):
    """:func:`silhouette`, or NaN where it is undefined (one cluster, one row per cluster)."""
    _, codes, n_clusters, weights = _prepare_rows(X, labels, kwargs.get("sample_weight"))
    if _silhouette_undefined(codes, n_clusters, weights):
        return np.nan
    return silhouette(X, labels, **kwargs)


@fill_docstring
def silhouette(X, labels, *, sample_weight=None, sample_size=None, random_state=None):
    r"""Mean silhouette coefficient (SH), Euclidean.

    Without weights, delegates to :func:`sklearn.metrics.silhouette_score`.
    The exact score costs O(n_samples^2) distance evaluations; at 10^5 points
    and beyond pass ``sample_size`` to score a random subset instead.

    Parameters
    ----------
    %(X)s
    labels : array-like of shape (n_samples,)
        Cluster labels; between 2 and n_samples - 1 distinct values (with
        weights: between 2 and :math:`W - 1`, W the total weight).
    %(sample_weight)s
    sample_size : int, default=None
        Number of points drawn without replacement (uniformly, among the rows
        of positive weight) to compute the score on; ``None`` uses every
        point.
    random_state : int, RandomState instance or None, default=None
        Seeds the subset drawn when ``sample_size`` is given.

    Returns
    -------
    float
        In [-1, 1]; higher means better separated clusters.

    Notes
    -----
    With weights :math:`w_i`, cluster weights :math:`W_C = \sum_{j \in C} w_j`
    and Euclidean distances :math:`d_{ij}`, the silhouette of row *i* in
    cluster *C* is :math:`s_i = (b_i - a_i) / \max(a_i, b_i)` with

    .. math::

        a_i = \frac{\sum_{j \in C} w_j d_{ij}}{W_C - 1}, \qquad
        b_i = \min_{C' \neq C} \frac{\sum_{j \in C'} w_j d_{ij}}{W_{C'}},

    :math:`s_i = 0` when :math:`W_C \le 1` (a cluster of one row in
    scikit-learn's convention) or :math:`a_i = b_i = 0`, and
    :math:`SH = \sum_i w_i s_i / \sum_i w_i`. This is the silhouette of the
    rows repeated :math:`w_i` times: a row's :math:`w_i - 1` copies sit in its
    cluster at distance 0, hence :math:`W_C - 1` others, and so integer
    weights give exactly the score of the repeated rows. The weights are
    frequencies, not probabilities: scaling them all changes :math:`a_i`
    (more copies at distance 0), and weights of a cluster summing to 1 or
    less make its rows score 0. Distances are computed directly
    (:func:`scipy.spatial.distance.cdist`), while scikit-learn's unweighted
    score uses the faster dot-product expansion, which can differ by about
    1e-8 for nearly coincident points.
    """
    X, codes, n_clusters, weights = _prepare_rows(X, labels, sample_weight)
    problem = _silhouette_undefined(codes, n_clusters, weights)
    if problem:
        raise ValueError(problem)
    if sample_size is not None:
        check_param("sample_size", sample_size, [at_least(2)])
    if weights is None:
        with decided_pool_threads():  # its distances' BLAS on the call's thread count
            return float(
                silhouette_score(X, codes, sample_size=sample_size, random_state=random_state)
            )
    if sample_size is not None:
        # Drawn as silhouette_score draws its subset.
        rows = check_random_state(random_state).permutation(codes.shape[0])[:sample_size]
        codes, n_clusters = encode_labels(codes[rows])
        X, weights = X[rows], weights[rows]
        if n_clusters < 2:
            raise ValueError(
                f"silhouette's sample of {sample_size} rows holds {n_clusters} cluster; "
                "it needs 2 or more: draw a larger sample_size."
            )
    return _weighted_silhouette(X, codes, n_clusters, weights)


# Rows of distances computed at a time by the weighted silhouette (64 MiB).
_CHUNK_ELEMENTS = 8 * 1024 * 1024


def _weighted_silhouette(X, codes, n_clusters, weights):
    n = codes.shape[0]
    rows = np.arange(n)
    totals = np.bincount(codes, weights=weights, minlength=n_clusters)
    member = np.zeros((n, n_clusters))
    member[rows, codes] = weights
    # sums[i, c]: the weighted sum of the distances from row i to cluster c.
    sums = np.empty((n, n_clusters))
    step = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, n, step):
        stop = min(start + step, n)
        sums[start:stop] = cdist(X[start:stop], X) @ member
    others = totals[codes] - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        intra = sums[rows, codes] / others
        mean_to = sums / totals
        mean_to[rows, codes] = np.inf
        inter = mean_to.min(axis=1)
        scores = (inter - intra) / np.maximum(intra, inter)
    scores[others <= 0.0] = 0.0
    scores = np.nan_to_num(scores)  # a == b == 0: identical rows
    return float(np.dot(weights, scores) / np.sum(weights))


@fill_docstring
def object_pair_deviation(labels, reference_labels, *, sample_weight=None):
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

    With ``sample_weight`` the counts :math:`n_{ij}, a_i, b_j, n` are total
    weights: a row of weight *w* counts as *w* rows, and pairs among its
    copies (which both clusterings put together) count as agreeing pairs. So
    the weights are frequencies: integer weights give exactly the DevO of
    the repeated rows, scaling every weight changes the value, and with
    weights below 1 the :math:`\binom{n}{2}` pairs can fall below the weight
    of the disagreeing pairs, so DevO can exceed 1; it is in [0, 1] when every
    positive weight is at least 1. With total weight at most 1 and a
    disagreement there is no pair to count: ``ValueError``.

    Parameters
    ----------
    %(labels_and_reference)s
    %(sample_weight)s

    Returns
    -------
    float
        In [0, 1]; lower means closer to the reference.
    """
    _, codes, k1, ref, k2, weights = _prepare_pair(None, labels, reference_labels, sample_weight)
    if weights is not None:
        return _weighted_pair_deviation(codes, k1, ref, k2, weights)
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


def _weighted_pair_deviation(codes, k1, ref, k2, weights):
    # The weight of the disagreeing pairs, sum over p < q of w_p w_q [disagree],
    # is (sum a_i^2 + sum b_j^2 - 2 sum n_ij^2) / 2: the pairs of a row with
    # itself cancel. Its rounding error is about eps n^2, so eps on DevO.
    _, joint = np.unique(codes * k2 + ref, return_inverse=True)
    joint = np.bincount(joint, weights=weights)
    a = np.bincount(codes, weights=weights, minlength=k1)
    b = np.bincount(ref, weights=weights, minlength=k2)
    disagree = max((np.dot(a, a) + np.dot(b, b) - 2.0 * np.dot(joint, joint)) / 2.0, 0.0)
    if disagree == 0.0:
        return 0.0
    n = float(np.sum(weights))
    if n <= 1.0:
        raise ValueError(
            f"object_pair_deviation counts a row of weight w as w rows, and sample_weight "
            f"sums to {n!r}: not two rows to make a pair. Scale the weights up (they are "
            "frequencies)."
        )
    return float(disagree / (n * (n - 1.0) / 2.0))


@fill_docstring
def centroid_deviation(X, labels, reference_labels, *, sample_weight=None):
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
    (in particular for identical clusterings). With ``sample_weight`` the
    centroids are weighted means (a row of weight *w* counts as *w* rows).

    Parameters
    ----------
    %(X)s
    %(labels_and_reference)s
    %(sample_weight)s

    Returns
    -------
    float
        In units of ``X``; lower means closer to the reference.
    """
    X, codes, k1, ref, k2, weights = _prepare_pair(X, labels, reference_labels, sample_weight)
    dist = cdist(centroids(X, codes, k1, weights), centroids(X, ref, k2, weights))
    if k1 < k2:
        dist = dist.T
    # Padding columns let a leftover centroid go unmatched at the cost of its
    # nearest distance, which keeps the optimum a single assignment problem.
    extra = dist.shape[0] - dist.shape[1]
    padded = np.hstack([dist, np.repeat(dist.min(axis=1, keepdims=True), extra, axis=1)])
    rows, cols = linear_sum_assignment(padded)
    return float(padded[rows, cols].sum())
