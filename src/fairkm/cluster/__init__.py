"""The estimator family: FairKM, BoundedKMeans, ZGYA and BlindKMeans.

Beside them, what FairKM is made of: the objective (the sensitive encoding and
the terms the kernels read), the weighting policy (how much fairness counts),
the engine (exact sweeps and mini-batch epochs) and its compiled kernels.
"""

from ._blind import BlindKMeans
from ._bounded import BoundedKMeans
from ._fairkm import FairKM
from ._zgya import ZGYA

__all__ = ["BlindKMeans", "BoundedKMeans", "FairKM", "ZGYA"]
