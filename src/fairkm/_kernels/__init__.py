"""Compiled kernels of the FairKM engine.

Pure functions over arrays and scalars; nothing here imports scikit-learn or
holds state. Shapes use ``n`` samples, ``d`` features, ``k`` clusters, ``A``
categorical attributes with ``V`` values in all, and ``B`` numeric attributes;
:func:`sweep` documents every argument.

- :mod:`._pricing`: the price of moving one point, and the notation of the
  fairness statistics behind it; the helpers every other module shares.
- :mod:`._blocks`: the exact sweep's prices for a block of points at once, in
  layouts the compiler vectorises (bit-identical to pricing one point at a time).
- :mod:`._moves`: the kernels that move points (the exact sweep, one point's
  move deltas, the mini-batch proposal, application and epoch).
- :mod:`._statistics`: statistics, inertia and objective recomputed from scratch.
- :mod:`._assign`: labels of rows against fixed centres or fitted statistics.

Every kernel is compiled by :func:`fairkm._kernel_cache.cached_njit`, whose
on-disk cache is keyed by the content of all of fairkm's kernel files, so an
edit to any of them recompiles every kernel on the next start. :func:`sweep`
itself is plain Python: it runs the unit-weight or the weighted sweep kernel.
"""

from ._assign import cheapest_insertion, nearest_center
from ._blocks import BLOCK
from ._moves import apply_moves, minibatch_epoch, move_deltas, propose_moves, sweep
from ._pricing import MOVE_ATOL, MOVE_RTOL, N_FACTORS
from ._statistics import cluster_statistics, inertia, statistics_objective

# What the engine, the estimators and the Dask tasks call, as ``_kernels.<name>``.
__all__ = [
    "BLOCK",
    "MOVE_ATOL",
    "MOVE_RTOL",
    "N_FACTORS",
    "apply_moves",
    "cheapest_insertion",
    "cluster_statistics",
    "inertia",
    "minibatch_epoch",
    "move_deltas",
    "nearest_center",
    "propose_moves",
    "statistics_objective",
    "sweep",
]
