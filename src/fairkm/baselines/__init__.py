"""Baselines the FairKM paper compares with, behind the same ``fit`` signature.

* :class:`BlindKMeans`: K-Means on ``X`` alone ("K-Means(N)" in the paper),
  a thin wrapper of :class:`sklearn.cluster.KMeans` that accepts and ignores
  ``sensitive_features``.
* :class:`ZGYA`: Variational Fair Clustering (Ziko, Granger, Yuan and Ben
  Ayed), K-Means variant, for one categorical sensitive attribute.
"""

from ._blind import BlindKMeans
from ._zgya import ZGYA

__all__ = ["BlindKMeans", "ZGYA"]
