"""What a repair may not make worse: the distances the library reports, and their losses.

Every report of fairkm measures a cluster's distance from the dataset's mix
of an attribute in two ways, both computed by the measures' own code
(:class:`fairkm.metrics._pieces.AttributePieces`, built as
:func:`fairkm.metrics.fairness_report` builds them):

* ``"euclidean"``: the Euclidean distance between the cluster's shares of
  the values and the dataset's (categorical), or the gap between the
  cluster's and the dataset's mean of the standardised values (numeric); the
  per-cluster distance of AE and ME, and ``cluster_deviation_``'s for a
  numeric attribute;
* ``"wasserstein"``: the total variation between the shares (categorical;
  AW, CW and MW in the default ``"principled"`` convention, the audit's
  distance and ``cluster_deviation_``'s), or the 1-Wasserstein distance
  between the cluster's and the dataset's standardised values (numeric; AW,
  CW, MW and the audit).

Of each, per attribute, the *mean* over the clusters (each counting once)
and the *worst* cluster are what a bounded :class:`fairkm.FairKM` may not
end above the clustering it repairs (:func:`standing`, :func:`losses`), nor
its prediction on new rows above nearest-centre assignment's on the same rows
(:func:`standing_of`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import numpy as np
import pandas as pd

from fairkm.metrics import Attribute, AttributePieces
from fairkm.utils._sensitive import CATEGORICAL

__all__ = ["ATOL", "MEASURES", "RTOL", "BoundRepair", "Loss", "loss_size", "losses", "standing",
           "standing_of", "with_thresholds"]

MEASURES = ("euclidean", "wasserstein")
STATISTICS = ("mean", "worst")
# A distance ends "above" the clustering's own when it exceeds it by more than this
# fraction of itself plus ATOL (distances are shares or standardised units): the last
# bits of sums taken in another order are no loss.
RTOL = 1e-12
ATOL = 1e-12
_BINARY = pd.Index([0, 1])


@dataclass(frozen=True)
class Loss:
    """One distance a repair left further from the dataset's mix than it found it.

    Attributes
    ----------
    attribute : str
    measure : {"euclidean", "wasserstein"}
        See :mod:`fairkm.bounds._loss`.
    statistic : {"mean", "worst"}
        The mean over the clusters (each counting once) or the worst cluster.
    before, after : float
        The distance in the clustering repaired and in the repair.
    """

    attribute: str
    measure: str
    statistic: str
    before: float
    after: float

    def __str__(self):
        change = (f"{self.after / self.before - 1:+.1%}" if self.before > 0
                  else f"+{self.after:.3g}")
        return (f"{self.attribute}: {self.statistic} {self.measure} distance "
                f"{self.before:.4g} -> {self.after:.4g} ({change})")


@dataclass(frozen=True)
class BoundRepair:
    """What keeping a clustering within a bound did to it (``FairKM.bound_repair_``).

    Attributes
    ----------
    how : {"met", "repaired", "relaxed", "searched", "least loss"}
        ``"met"``: the clustering met the bound and was kept. ``"repaired"``:
        rows moved by the guarded local search from the clustering;
        ``"relaxed"``: from the linear relaxation under the clustering's own
        bands; ``"searched"``: by the harder search (more guards, more
        starting points); ``"least loss"``: no clustering found meets the
        bound without a loss, and the one of least loss is kept (``loss``
        says what got worse).
    n_moved : int
        Rows whose cluster changed.
    before, after : dict
        Per ``(attribute, measure)``, the ``(mean, worst)`` distance from the
        dataset's mix over the clusters, of the clustering repaired and of
        the result (:mod:`fairkm.bounds._loss` names the measures).
    loss : tuple of Loss
        Every attribute, measure and statistic the result left further from
        the dataset's mix than the clustering repaired had it; empty when none.
    """

    how: str
    n_moved: int
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)
    loss: tuple = ()

    @property
    def attributes_worse(self):
        """The attributes of :attr:`loss`, each once, in the order met."""
        return list(dict.fromkeys(item.attribute for item in self.loss))

    def table(self):
        """Return ``before`` and ``after`` as a DataFrame, one row per (attribute, measure).

        Columns ``mean before``, ``mean after``, ``worst before``, ``worst
        after`` and ``worse`` (whether either statistic ended above its own).
        """
        worse = {(item.attribute, item.measure) for item in self.loss}
        rows = [(*key, m0, m1, w0, w1, key in worse)
                for key, ((m0, w0), (m1, w1)) in
                ((key, (self.before[key], self.after[key])) for key in self.before)]
        return pd.DataFrame(rows, columns=["attribute", "measure", "mean before", "mean after",
                                           "worst before", "worst after", "worse"]
                            ).set_index(["attribute", "measure"])


def standing_of(labels, sf, weights=None):
    """Per ``(attribute, measure)``, the ``(mean, worst)`` distance of the clusters from the mix.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        Any cluster labels; the clusters are those holding a row of positive
        weight, as :func:`fairkm.metrics.fairness_report` counts them.
    sf : SensitiveFeatures
        The attributes (their ``names``, ``kinds``, ``columns`` and
        ``categories``), as :func:`fairkm.utils._sensitive.check_sensitive_features`
        reads them (a numeric one of a single value is at distance 0 everywhere).
    weights : ndarray of shape (n_samples,) or None
        Row weights; None for unit weights.

    Returns
    -------
    dict of (str, str) to (float, float)
    """
    live = slice(None) if weights is None else weights > 0
    _, codes = np.unique(labels[live], return_inverse=True)
    n_clusters = int(codes.max()) + 1
    weights = None if weights is None else weights[live]
    columns = [column[live] for column in sf.columns]
    sizes = np.bincount(codes, weights=weights, minlength=n_clusters)
    # What AttributePieces reads of the features, on the rows kept (no new reading of them).
    kept = SimpleNamespace(names=sf.names, kinds=sf.kinds, columns=columns,
                           categories=sf.categories)
    out = {}
    for j, (name, kind, column) in enumerate(zip(sf.names, sf.kinds, columns, strict=True)):
        # The measures' own pieces, with fairness_report's default conventions.
        piece = AttributePieces(codes, n_clusters, sizes, kept, j, weights)
        for measure in MEASURES:
            if kind != CATEGORICAL and np.ptp(column) == 0:
                out[name, measure] = (0.0, 0.0)
                continue
            d = getattr(piece, f"{measure}_distances")
            out[name, measure] = (float(d.mean()), float(d.max()))
    return out


def standing(bounds, labels):
    """:func:`standing_of` on a bound set's attributes and weights.

    The bound set's numeric attributes are already standardised, which
    standardising again leaves as they are.
    """
    attributes = bounds.attributes
    sf = SimpleNamespace(names=[a.name for a in attributes], kinds=[a.kind for a in attributes],
                         columns=[a.values for a in attributes],
                         categories=[a.categories if a.kind == CATEGORICAL else None
                                     for a in attributes])
    return standing_of(labels, sf, bounds.weights)


def losses(before, after):
    """Return every :class:`Loss` of ``after`` against ``before`` (two :func:`standing`)."""
    out = []
    for (name, measure), own in before.items():
        for statistic, b, x in zip(STATISTICS, own, after[name, measure], strict=True):
            if x > b * (1 + RTOL) + ATOL:
                out.append(Loss(name, measure, statistic, b, x))
    return tuple(out)


def loss_size(items):
    """Return the size of a loss, to choose the least: its relative increases, summed."""
    return sum((item.after - item.before) / max(item.before, 1e-12) for item in items)


def with_thresholds(bounds, n_bins):
    """Return the bound set plus, per numeric attribute, ``n_bins - 1`` threshold attributes.

    Attribute ``"age <= q"`` is 1 for a row whose standardised value is at
    most ``q``, the quantiles of the values at ``1/n_bins ... (n_bins-1)/n_bins``
    (repeated ones once). Its total variation in a cluster is the gap between
    the cluster's and the dataset's distribution function at ``q``, and the
    1-Wasserstein distance is the integral of that gap: guarding the
    thresholds' distances guards the Wasserstein distance as finely as the
    bins are.
    """
    extra = []
    w = np.ones(bounds.n_samples) if bounds.weights is None else bounds.weights
    for a in bounds.numeric(bounded_only=False):
        live = a.values[w > 0]
        for q in np.unique(np.quantile(live, np.arange(1, n_bins) / n_bins)):
            codes = (a.values <= q).astype(np.int64)
            counts = np.bincount(codes, weights=w, minlength=2)
            if counts.min() <= 0:
                continue
            extra.append(Attribute(f"{a.name} <= {q:.6g}", CATEGORICAL, codes, _BINARY,
                                   counts / counts.sum(), np.nan, None, None))
    return replace(bounds, attributes=[*bounds.attributes, *extra])
