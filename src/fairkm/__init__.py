"""fairkm: fair clustering with many sensitive attributes at once (FairKM, EDBT 2020)."""

from ._fairkm import FairKM
from .baselines import ZGYA, BlindKMeans

__version__ = "0.1.0"

__all__ = ["BlindKMeans", "FairKM", "ZGYA", "__version__"]
