"""fairkm: fair clustering with many sensitive attributes at once (FairKM, EDBT 2020).

The estimators and the subpackages load on first use (PEP 562), so
``import fairkm`` alone loads neither scikit-learn, pandas nor numba.
"""

import importlib

__version__ = "0.1.0"

__all__ = ["BlindKMeans", "BoundedKMeans", "FairKM", "ZGYA", "__version__"]

# Each public estimator, and the module that defines it.
_ESTIMATORS = {name: ".cluster" for name in ("BlindKMeans", "BoundedKMeans", "FairKM", "ZGYA")}
_SUBPACKAGES = ("bounds", "cli", "cluster", "dask", "datasets", "exceptions", "experiments",
                "metrics", "report", "tradeoff")


def __getattr__(name):
    if name in _ESTIMATORS:
        value = getattr(importlib.import_module(_ESTIMATORS[name], __name__), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_ESTIMATORS, *_SUBPACKAGES})
