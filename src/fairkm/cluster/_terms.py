"""The terms the kernels read: one encoding's per-row codes and per-value constants.

:meth:`fairkm.cluster._encoding.SensitiveEncoding.terms` builds them for some rows;
the engine (:mod:`fairkm.cluster._engine`) and prediction hand them to the
kernels (:mod:`fairkm.cluster._kernels`), whose notation they follow, as two
records: :class:`KernelTerms` (what every kernel reads, from
:meth:`Terms.kernel`) and :class:`KernelStats` (the per-cluster statistics, from
:meth:`fairkm.cluster._engine.Stats.kernel`). Plain NumPy, so the encoding that
builds them loads no compiled code; numba takes the records as named tuples,
and its on-disk cache names their classes, which live here at module level.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

__all__ = ["KernelStats", "KernelTerms", "Terms", "build_terms"]


class KernelTerms(NamedTuple):
    """What every kernel reads of the rows and the fit (IN), ``fairness_weight`` folded in.

    Built by :meth:`Terms.kernel`; the kernels' notation
    (:mod:`fairkm.cluster._kernels`).
    """

    codes: np.ndarray  # (n, A) int64, global value index (attribute offset added)
    Z: np.ndarray  # (n, B) float64, centred standardised numeric values
    weights: np.ndarray  # (n,) sample weights, or (0,) for unit weights
    value_prop: np.ndarray  # (V,) dataset proportion of each value
    value_const: np.ndarray  # (V,) 1 - 2 p_v + P2_a
    value_shift: np.ndarray  # (V,) p_v - P2_a
    offsets: np.ndarray  # (A + 1,) int64, first global value index of each attribute, and V
    cat_coef: np.ndarray  # (A,) fairness_weight * w_a / (n^e m_a)
    num_coef: np.ndarray  # (B,) fairness_weight * w_b / n^e
    cluster_exponent: int  # e: cluster C weighted by (|C|/n)^e (2, 1 or 0)


class KernelStats(NamedTuple):
    """The per-cluster statistics the kernels read and update (IN/OUT), cluster axis last.

    Built by :meth:`fairkm.cluster._engine.Stats.kernel`: the statistics'
    own arrays, so a kernel's updates land in them.
    """

    sums: np.ndarray  # (d, k) per-cluster (weighted) sums of X
    centers: np.ndarray  # (d, k) means (0 for an empty cluster)
    counts: np.ndarray  # (k,) sizes (total weights)
    value_counts: np.ndarray  # (V, k) (weighted) count of each value
    cat_dev: np.ndarray  # (A, k) G per attribute and cluster
    num_sums: np.ndarray  # (B, k) (weighted) sums of Z


@dataclass(frozen=True)
class Terms:
    """Per-attribute quantities the kernels need, for one encoding of some rows.

    ``cat_weight`` and ``num_weight`` are the fairness-term coefficients
    without ``fairness_weight``: ``w_a / (n^e m_a)`` and ``w_b / n^e``, each
    cluster's term being weighted by ``(|C|/n)^e`` (``cluster_exponent``; the
    paper's is 2).
    """

    codes: np.ndarray  # (n, A) int64, global value index
    Z: np.ndarray  # (n, B) float64, centred standardised numeric values
    weights: np.ndarray  # (n,) sample weights, or (0,) for unit weights
    offsets: np.ndarray  # (A + 1,) first global value index of each attribute
    value_prop: np.ndarray  # (V,)
    value_const: np.ndarray  # (V,)
    value_shift: np.ndarray  # (V,)
    cat_weight: np.ndarray  # (A,)
    num_weight: np.ndarray  # (B,)
    n_norm: np.ndarray  # (A,) fitted number of values of each attribute
    inv_ne: float  # 1 / n^e
    cluster_exponent: int = 2  # e: cluster C weighted by (|C|/n)^e

    @property
    def n_values(self):
        return self.value_prop.shape[0]

    def kernel(self, lam):
        """Return the :class:`KernelTerms` the kernels read, with ``fairness_weight`` ``lam``.

        The statistics kernels read no coefficient: they take any ``lam``.
        """
        return KernelTerms(
            codes=self.codes, Z=self.Z, weights=self.weights, value_prop=self.value_prop,
            value_const=self.value_const, value_shift=self.value_shift, offsets=self.offsets,
            cat_coef=lam * self.cat_weight, num_coef=lam * self.num_weight,
            cluster_exponent=self.cluster_exponent,
        )

    def reweighted(self, cat_w, num_w):
        """Return the same terms with other attribute weights ``w_a``."""
        return replace(
            self,
            cat_weight=np.asarray(cat_w, dtype=np.float64) / self.n_norm * self.inv_ne,
            num_weight=np.asarray(num_w, dtype=np.float64) * self.inv_ne,
        )

    def empty_like(self):
        """Return the terms of the same rows without sensitive attributes (a blind engine)."""
        n = self.codes.shape[0]
        return Terms(
            codes=np.zeros((n, 0), dtype=np.int64),
            Z=np.zeros((n, 0)),
            weights=self.weights,
            offsets=np.zeros(1, dtype=np.int64),
            value_prop=np.zeros(0),
            value_const=np.zeros(0),
            value_shift=np.zeros(0),
            cat_weight=np.zeros(0),
            num_weight=np.zeros(0),
            n_norm=np.zeros(0),
            inv_ne=self.inv_ne,
            cluster_exponent=self.cluster_exponent,
        )

    def with_rows(self, codes, Z, weights):
        """Return the same constants with other rows (those of one partition, say).

        Terms without attributes (a blind engine) keep none of the rows' attributes.
        """
        n = codes.shape[0]
        if self.cat_weight.shape[0] != codes.shape[1]:
            codes = np.zeros((n, 0), dtype=np.int64)
        if self.num_weight.shape[0] != Z.shape[1]:
            Z = np.zeros((n, 0))
        return replace(self, codes=codes, Z=Z, weights=weights)

    def of_rows(self, rows):
        """Return the terms of ``rows`` alone, as if they were the data (a sample of it).

        The dataset's mix stays the one every cluster is priced against; each
        cluster's weight ``(|C|/n)^e`` counts ``n`` as the rows' own total weight,
        so the sample's fairness term reads as the whole data's does.
        """
        weights = self.weights[rows] if self.weights.shape[0] else self.weights
        total = float(weights.sum()) if weights.shape[0] else float(len(rows))
        inv_ne = 1.0 / total**self.cluster_exponent
        return replace(self, codes=self.codes[rows], Z=np.ascontiguousarray(self.Z[rows]),
                       weights=weights, inv_ne=inv_ne,
                       cat_weight=self.cat_weight * (inv_ne / self.inv_ne),
                       num_weight=self.num_weight * (inv_ne / self.inv_ne))

    def total_sq_norm(self, X):
        """``sum_i w_i ||x_i||^2``, the constant part of the K-Means term."""
        if self.weights.shape[0] == 0:
            return float(np.einsum("ij,ij->", X, X))
        return float(np.einsum("i,ij,ij->", self.weights, X, X))


def build_terms(codes, Z, weights, proportions, n_values, cat_w, num_w, n_samples,
                cluster_exponent=2):
    """Assemble :class:`Terms` from the rows' codes and values and per-attribute constants.

    ``codes`` (n, A) hold global value indices (each attribute's offset
    added), ``Z`` (n, B) centred standardised numeric values, ``weights`` the
    rows' sample weights (shape (0,) for unit weights); ``n_samples`` is the
    total weight; ``cluster_exponent`` the ``e`` of each cluster's weight
    ``(|C|/n)^e``. ``proportions[a]``
    may be longer than the fitted number of values ``n_values[a]`` (an
    "unseen value" slot of proportion 0 in ``predict``); the deviation is
    still divided by the fitted number of values.
    """
    sizes = np.array([len(p) for p in proportions], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    value_prop = np.concatenate(proportions) if proportions else np.zeros(0)
    p2 = np.array([np.dot(p, p) for p in proportions])
    p2_per_value = np.repeat(p2, sizes)
    inv_ne = 1.0 / float(n_samples) ** cluster_exponent
    return Terms(
        codes=codes,
        Z=np.ascontiguousarray(Z),
        weights=weights,
        offsets=offsets,
        value_prop=value_prop,
        value_const=1.0 - 2.0 * value_prop + p2_per_value,
        value_shift=value_prop - p2_per_value,
        cat_weight=np.asarray(cat_w, dtype=np.float64) / np.asarray(n_values, float) * inv_ne
        if len(cat_w)
        else np.zeros(0),
        num_weight=np.asarray(num_w, dtype=np.float64) * inv_ne,
        n_norm=np.asarray(n_values, dtype=np.float64),
        inv_ne=inv_ne,
        cluster_exponent=int(cluster_exponent),
    )
