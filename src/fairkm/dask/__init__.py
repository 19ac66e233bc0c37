"""FairKM on Dask collections partitioned across ``dask.distributed`` workers.

The rows stay on the workers; only the per-cluster statistics travel, and no
round raises the objective (the Notes of :class:`FairKM` say how).

Install with ``pip install 'fairkm[dask]'``.
"""

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import dask.dataframe  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "fairkm.dask needs the optional dependencies: pip install 'fairkm[dask]'"
    ) from exc

from ._estimator import FairKM

__all__ = ["FairKM"]
