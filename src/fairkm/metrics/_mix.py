"""A cluster's distance from the dataset's mix, from per-cluster sums: the engine's numbers.

:func:`cluster_deviation` is what :class:`fairkm.FairKM` reports per cluster
(``cluster_deviation_``) and what its weighting walks on, computed from the
sums the engine keeps; the bounds check reads a numeric attribute's
standardised cluster means through :func:`mean_gap` too. Its floating-point
operations are the engine's, in the engine's order, so that every fit, and
every decision the weighting takes on these numbers, is what it was.

The fairness measures compute the same categorical distance from the
clusters' shares instead (AW and MW with the ``"principled"`` convention,
:func:`fairkm.metrics._wasserstein.categorical_wasserstein`): the same number
to the last bit or two, in an order the published measures are kept in.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cluster_deviation", "excess", "mean_gap", "total_variation"]


def excess(value_counts, counts, value_prop):
    """Per value and cluster, the count minus the count the dataset's mix would give.

    ``value_counts`` (V, k), ``counts`` (k,) and ``value_prop`` (V,) as in
    :func:`cluster_deviation`.
    """
    return value_counts - value_prop[:, None] * counts


def _per_cluster(sums, counts):
    """Divide each cluster's column by its size; an empty cluster's column is NaN."""
    live = counts > 0
    sums[:, live] /= counts[live]
    sums[:, ~live] = np.nan
    return sums


def total_variation(value_counts, counts, value_prop, offsets):
    """Each cluster's total-variation distance from the dataset's mix, shape (A, k).

    Half the L1 distance between the cluster's proportions of an attribute's
    values and the dataset's, ``sum_v |c_v - |C| p_v| / (2 |C|)``; NaN for an
    empty cluster. Arguments as in :func:`cluster_deviation`.
    """
    if offsets.shape[0] == 1:
        return np.zeros((0, counts.shape[0]))
    gap = np.abs(excess(value_counts, counts, value_prop))
    return _per_cluster(0.5 * np.add.reduceat(gap, offsets[:-1], axis=0), counts)


def mean_gap(num_sums, counts):
    """Each cluster's ``|mean|`` of centred standardised values, shape (B, k); NaN if empty.

    ``num_sums`` (B, k): per numeric attribute and cluster, the (weighted) sum
    of the values, standardised and centred on the dataset's mean; the
    result is how many standard deviations the cluster's mean lies from the
    dataset's.
    """
    return _per_cluster(np.abs(num_sums), counts)


def cluster_deviation(value_counts, counts, value_prop, offsets, num_sums):
    """Each cluster's distance from the dataset's mix, per attribute, shape (A + B, k).

    For a categorical attribute the total-variation distance between the
    cluster's mix and the dataset's (:func:`total_variation`); for a numeric
    one the gap between the cluster's mean of the standardised values and the
    dataset's (:func:`mean_gap`). Categorical attributes come first; an empty
    cluster's column is NaN.

    Parameters
    ----------
    value_counts : ndarray of shape (V, k)
        The (weighted) count of each value in each cluster, the values of the
        A categorical attributes one attribute after another.
    counts : ndarray of shape (k,)
        The clusters' sizes (total weights).
    value_prop : ndarray of shape (V,)
        The dataset's proportion of each value.
    offsets : ndarray of shape (A + 1,), int64
        Where each attribute's values start among the V, then V.
    num_sums : ndarray of shape (B, k)
        Per numeric attribute and cluster, the (weighted) sum of the values,
        standardised and centred on the dataset's mean.

    Returns
    -------
    ndarray of shape (A + B, k)
    """
    return np.concatenate([total_variation(value_counts, counts, value_prop, offsets),
                           mean_gap(num_sums, counts)])
