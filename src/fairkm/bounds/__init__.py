"""Guaranteed bounds: every cluster's mix within a stated distance of the dataset's.

FairKM lowers each cluster's distance from the dataset's mix on average, which
wins on the averages but can leave one cluster with an odd mix. This package
answers the auditor's question instead: *is every cluster within*
``delta`` *of the dataset's mix, for every protected attribute at once?*

* :func:`fair_assignment`: assign rows to given centres (from
  :class:`fairkm.FairKM`, :class:`sklearn.cluster.KMeans` or your own) at the
  least K-Means cost such that every cluster meets the bounds exactly: the
  linear relaxation (Bera, Chakrabarty, Flores and Negahbani, "Fair
  Algorithms for Clustering", NeurIPS 2019), solved by scipy's HiGHS, then
  whole rows by a compiled local search; the relaxation's prices certify how
  far from optimal the result can be; optionally alternating centres and
  assignments.
* :class:`BoundedKMeans`: the cheapest clustering found under the bounds, as
  a scikit-learn estimator that starts from FairKM's centres (or k-means++
  seeds, or given ones) and alternates.
* ``FairKM(max_deviation=...)`` (:func:`constrain`, below): FairKM's own
  clustering kept within the bounds, changed only where they ask.
* :func:`check_bounds`: whether any clustering meets the bounds, and its worst
  cluster per attribute.
"""

from ._assign import BoundedAssignment, BoundNotMetWarning, fair_assignment
from ._assign import solve as solve
from ._check import BoundsCheck, check_bounds
from ._check import check_labels as check_labels
from ._check import enforced as enforced
from ._constrain import constrain as constrain
from ._estimator import BoundedKMeans
from ._infeasible import InfeasibleBoundError
from ._spec import bounds_from_features as bounds_from_features
from ._spec import check_kind as check_kind
from ._spec import resolve_bounds as resolve_bounds

# solve (a bounded assignment from validated arrays), constrain (a bound on a clustering
# one has: FairKM(max_deviation=...)), enforced (the bound a fit enforced),
# resolve_bounds (raw columns),
# bounds_from_features (columns a fit has read), check_labels (many clusterings
# against one resolution) and check_kind
# are the seam for fairkm's other packages (FairKM(max_deviation=...), the audit);
# they are not in __all__ and not part of the public API.

__all__ = [
    "BoundNotMetWarning",
    "BoundedAssignment",
    "BoundedKMeans",
    "BoundsCheck",
    "InfeasibleBoundError",
    "check_bounds",
    "fair_assignment",
]
