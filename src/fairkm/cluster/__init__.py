"""The estimator family: FairKM, BoundedKMeans, ZGYA and BlindKMeans.

Beside them, what FairKM is made of: the objective (the sensitive encoding and
the terms the kernels read), the weighting policy (how much fairness counts),
the engine (exact sweeps and mini-batch epochs) and its compiled kernels.
:class:`SensitiveAttributes` and :class:`BlindClustering` are the records a
fitted FairKM holds in ``sensitive_attributes_`` and ``blind_clustering_``.
"""

from ._base import BlindClustering, SensitiveAttributes
from ._blind import BlindKMeans
from ._bounded import BoundedKMeans
from ._fairkm import FairKM
from ._zgya import ZGYA

__all__ = ["BlindClustering", "BlindKMeans", "BoundedKMeans", "FairKM", "SensitiveAttributes",
           "ZGYA"]
