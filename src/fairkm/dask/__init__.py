"""FairKM on Dask collections partitioned across ``dask.distributed`` workers.

The rows stay on the workers; only the per-cluster statistics travel. Each
round the client sends the global statistics (sums, counts, value counts and
numeric sums per cluster: O(k (d + V)) numbers) to one task per partition. The
task runs one exact sweep of :func:`fairkm.cluster._engine.sweep` over the partition's
rows against a private copy of them, so every move is priced exactly as long
as the other partitions stand still, and returns the partition's new labels
(kept on the worker) and its exact statistics. The client then applies the
partitions' changes one at a time, in a fixed order that rotates from round
to round, and keeps a partition's change only if the objective, recomputed
from the statistics, falls (and no cluster empties); otherwise that
partition's labels stay as they were. As with the in-memory mini-batch engine,
no round raises the objective.

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
