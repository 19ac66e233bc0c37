"""Guaranteed bounds: every cluster's mix within a stated distance of the dataset's.

FairKM lowers a size-weighted sum of squared deviations, which wins on the
averages but lets a small cluster keep an odd mix. This package answers the
auditor's question instead: *is every cluster within* ``delta`` *of the
dataset's mix, for every protected attribute at once?*

* :func:`fair_assignment`: assign rows to given centres (from
  :class:`fairkm.FairKM`, :class:`sklearn.cluster.KMeans` or your own) at the
  least K-Means cost such that every cluster meets the bounds, by linear
  programming with scipy's HiGHS and an exact integer rounding (Bera,
  Chakrabarty, Flores and Negahbani, "Fair Algorithms for Clustering",
  NeurIPS 2019); optionally alternating centres and assignments.
* :class:`BoundedKMeans`: the same as a scikit-learn estimator that seeds its
  own centres (k-means++) or takes them.
* :func:`check_bounds`: whether any clustering meets the bounds, and its worst
  cluster per attribute.
"""

from ._assign import BoundedAssignment, BoundNotMetWarning, fair_assignment
from ._check import BoundsCheck, check_bounds
from ._estimator import BoundedKMeans
from ._infeasible import InfeasibleBoundError

__all__ = [
    "BoundNotMetWarning",
    "BoundedAssignment",
    "BoundedKMeans",
    "BoundsCheck",
    "InfeasibleBoundError",
    "check_bounds",
    "fair_assignment",
]
