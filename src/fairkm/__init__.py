"""fairkm: fair clustering with many sensitive attributes at once (FairKM, EDBT 2020)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
