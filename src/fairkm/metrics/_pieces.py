"""What the fairness measures of one attribute share: its per-cluster pieces.

A categorical attribute's pieces come from one contingency table, a single
``np.bincount`` over the combined (cluster, value) codes; a numeric
attribute's from its standardised values, with one sort for the Wasserstein
distances. Every fairness measure is a function of these pieces (the
``of_attribute`` of its entry in :data:`~fairkm.metrics.MEASURES`), and
:class:`AttributePieces` computes each piece on first use and keeps it, so
:func:`~fairkm.metrics.fairness_report` pays for it once per attribute and a
single measure pays only for what it reads.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from fairkm.utils._sensitive import CATEGORICAL, standardize_numeric
from fairkm.utils._sums import weighted_sum

from ._wasserstein import categorical_wasserstein, numeric_wasserstein

__all__ = ["AttributePieces"]


def _contingency(codes, n_clusters, values, n_values, weights=None):
    """Count (or weigh) the points per (cluster, value): one bincount over combined codes."""
    flat = np.bincount(codes * n_values + values, weights=weights,
                       minlength=n_clusters * n_values)
    return flat.reshape(n_clusters, n_values)


def _numeric_euclidean(codes, n_clusters, z, weights=None):
    if weights is None:
        sizes = np.bincount(codes, minlength=n_clusters)
        means = np.bincount(codes, weights=z, minlength=n_clusters) / sizes
        return np.abs(means - z.mean())
    sizes = np.bincount(codes, weights=weights, minlength=n_clusters)
    means = np.bincount(codes, weights=weights * z, minlength=n_clusters) / sizes
    return np.abs(means - weighted_sum(z, weights) / float(np.sum(weights)))


class AttributePieces:
    """The per-cluster pieces of one sensitive attribute, each computed on first use.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,), int64
        Cluster codes, from :func:`~fairkm.metrics._checks.prepare_fairness`.
    n_clusters : int
        Number of non-empty clusters.
    sizes : ndarray of shape (n_clusters,)
        Cluster sizes, ``np.bincount(codes, weights=weights)``.
    sf : fairkm.utils._sensitive.SensitiveFeatures
        The encoded attributes.
    j : int
        Which attribute.
    weights : ndarray of shape (n_samples,) or None
        Positive row weights, ``None`` for unit weights.
    wasserstein : {"principled", "published"}, default="principled"
        The convention of :attr:`wasserstein_distances` for a categorical
        attribute, already checked.
    eps : float, default=1e-20
        KL's floor on the cluster proportions, already checked.
    delta : float, default=0.2
        MPV's slack, already checked.

    Attributes
    ----------
    categorical : bool
        Whether the attribute is categorical; :attr:`counts` and
        :attr:`proportions` exist for a categorical attribute only.
    sizes : ndarray of shape (n_clusters,)
        Cluster sizes (total weights).
    eps, delta : float
        The options of the measures that read them.
    """

    def __init__(self, codes, n_clusters, sizes, sf, j, weights, *, wasserstein="principled",
                 eps=1e-20, delta=0.2):
        self.categorical = sf.kinds[j] == CATEGORICAL
        self.sizes = sizes
        self.eps = eps
        self.delta = delta
        self._codes = codes
        self._n_clusters = n_clusters
        self._sf = sf
        self._j = j
        self._weights = weights
        self._convention = wasserstein

    @cached_property
    def counts(self):
        """The (weighted) count of each value in each cluster, shape (n_clusters, n_values)."""
        return _contingency(self._codes, self._n_clusters, self._sf.columns[self._j],
                            len(self._sf.categories[self._j]), self._weights)

    @cached_property
    def proportions(self):
        """Each cluster's mix of the values and the dataset's: a pair of arrays."""
        sizes = self.counts.sum(axis=1)
        totals = self.counts.sum(axis=0)
        return self.counts / sizes[:, None], totals / sizes.sum()

    @cached_property
    def _standardized(self):
        values = self._sf.columns[self._j]
        mean, scale = standardize_numeric(values, self._sf.names[self._j], self._weights)
        return (values - mean) / scale

    @cached_property
    def euclidean_distances(self):
        """Each cluster's Euclidean distance to the dataset's mix, shape (n_clusters,).

        For a numeric attribute, the gap between the cluster's and the dataset's
        mean of the standardised values.
        """
        if self.categorical:
            props, overall = self.proportions
            diff = props - overall
            return np.sqrt(np.einsum("ij,ij->i", diff, diff))
        return _numeric_euclidean(self._codes, self._n_clusters, self._standardized,
                                  self._weights)

    @cached_property
    def wasserstein_distances(self):
        """Each cluster's Wasserstein distance to the dataset's mix, shape (n_clusters,)."""
        if self.categorical:
            props, overall = self.proportions
            return categorical_wasserstein(props, overall, self._convention)
        return numeric_wasserstein(self._codes, self._n_clusters, self._standardized,
                                   self._weights)
