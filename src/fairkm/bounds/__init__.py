"""The solver behind the guaranteed bounds: every cluster's mix within a stated distance.

FairKM lowers each cluster's distance from the dataset's mix on average; a
bound asks that *every* cluster stay within ``delta`` of it, for every
protected attribute at once. This package solves for whole rows under such a
bound; what a bound means and whether labels meet it is
:func:`fairkm.metrics.check_bounds`, and the estimators that use the solver
are :class:`fairkm.BoundedKMeans` and ``fairkm.FairKM(max_deviation=...)``.

* :func:`fair_assignment`: assign rows to given centres (from
  :class:`fairkm.FairKM`, :class:`sklearn.cluster.KMeans` or your own) at the
  least K-Means cost such that every cluster meets the bounds exactly: the
  linear relaxation (Bera, Chakrabarty, Flores and Negahbani, "Fair
  Algorithms for Clustering", NeurIPS 2019), solved by scipy's HiGHS, then
  whole rows by a compiled local search; the relaxation's prices certify how
  far from optimal the result can be; optionally alternating centres and
  assignments.
* :func:`constrain`: a clustering one already has (FairKM's) kept within a
  bound, its rows moved only where the bound asks (not public API).
"""

from ._assign import SOLVER_CONSTRAINTS as SOLVER_CONSTRAINTS
from ._assign import BoundedAssignment, fair_assignment
from ._assign import as_fair_as_whole_rows as as_fair_as_whole_rows
from ._assign import solve as solve
from ._cache import guard_kernel_caches as guard_kernel_caches
from ._loss import BoundRepair as BoundRepair
from ._loss import losses as losses
from ._loss import standing_of as standing_of
from ._model import sq_distances as sq_distances
from ._repair import constrain as constrain
from ._threads import decided_threads as decided_threads
from ._threads import numba_threads as numba_threads
from ._threads import thread_count as thread_count

# Beside the public names, what the estimators of fairkm.cluster call: solve (a bounded
# assignment from validated arrays), as_fair_as_whole_rows (max_deviation=0's floor),
# constrain (FairKM(max_deviation=...)), BoundRepair, losses and standing_of (what a repair
# or a prediction may not make worse), sq_distances and SOLVER_CONSTRAINTS, and the thread
# count every fit and predict runs its numba kernels on (decided_threads, numba_threads,
# thread_count), and guard_kernel_caches for every module of cached kernels. Not in
# __all__: not public API.
__all__ = ["BoundedAssignment", "fair_assignment"]


def __dir__():
    # The public names only: the estimators' names above stay importable.
    return sorted(__all__)
