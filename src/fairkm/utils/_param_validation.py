"""What each parameter accepts, in scikit-learn's own vocabulary and checks.

Every estimator lists its constructor's parameters in ``_parameter_constraints``
with scikit-learn's constraint types (``Interval``, ``StrOptions``,
``"array-like"``, ``"random_state"``, ``"verbose"``...), and
``BaseEstimator._validate_params`` checks them when ``fit`` starts, before the
data are read: a refusal reads as scikit-learn's do, and is its
``InvalidParameterError`` (both a ``ValueError`` and a ``TypeError``)::

    The 'n_clusters' parameter of FairKM must be an int in the range [1, inf). Got 0 instead.

Functions check theirs with :func:`check_param` and the same lists, so a
parameter shared with an estimator is refused in the same words. Checks that
need the data or several parameters together (``n_samples >= n_clusters``, an
``init`` array's shape) live in each estimator's ``_check_params_vs_input``,
with the shared ones here.

scikit-learn's ``sklearn.utils._param_validation`` is private, so
``pyproject.toml`` bounds scikit-learn's version and
``tests/test_params.py`` checks what fairkm uses of it.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_array
from sklearn.utils._param_validation import (
    Interval,
    StrOptions,
    validate_parameter_constraints,
)

from fairkm.utils._call_site import entry_point
from fairkm.utils._options import CLUSTER_WEIGHTINGS, DEVIATION_KINDS

__all__ = [
    "BOUND",
    "CLUSTER_WEIGHTING",
    "DEVIATION_KIND",
    "FAMILY_CONSTRAINTS",
    "INTERSECTIONS",
    "MAX_ITER",
    "NUMERIC_SENSITIVE",
    "N_CLUSTERS",
    "RANDOM_STATE",
    "SHARE_BOUND",
    "TOL",
    "Interval",
    "StrOptions",
    "Share",
    "at_least",
    "check_init_centers",
    "check_n_samples",
    "check_param",
    "unit_interval",
]

# The compiled kernels and NumPy hold counts in int64: a larger int would pass a check of
# ">= 1" and fail later inside them.
_LARGEST_INT = int(np.iinfo(np.int64).max)


def at_least(low, high=None):
    """Accept an int ``>= low`` (and ``<= high``), no larger than the kernels' int64 holds."""
    return Interval(Integral, low, _LARGEST_INT if high is None else high, closed="both")


def unit_interval(*, low_open=False, high_closed=False):
    """Accept a float in [0, 1), with the ends opened or closed as asked."""
    closed = {(False, False): "left", (False, True): "both", (True, False): "neither",
              (True, True): "right"}[low_open, high_closed]
    return Interval(Real, 0, 1, closed=closed)


class Share(Interval):
    """A share of 1 (a fraction, such as 0.05 for 5%), never a percentage.

    A real-valued ``Interval`` whose refusal adds how a percentage is written:
    ``max_deviation=5`` meant as 5% reads as 500%, so every share parameter
    (``max_deviation``, ``max_cost``, ``max_unfairness``)
    refuses a value above 1 in the same words, and so does the command line.
    (``min_balance`` is a ratio of counts, not a share: a plain interval.)
    """

    def __init__(self, left=0, right=1, *, closed="both"):
        super().__init__(Real, left, right, closed=closed)

    def __str__(self):
        return f"{super().__str__()} (a share, not a percentage: 0.05 for 5%)"


def check_param(name, value, constraints, caller=None):
    """Raise scikit-learn's ``InvalidParameterError`` unless ``value`` meets a constraint.

    Parameters
    ----------
    name : str
        The parameter.
    value : object
        What the caller passed.
    constraints : list
        What the parameter accepts, as in ``_parameter_constraints``.
    caller : str, default=None
        The function or class it was passed to, for the message (None: the
        fairkm function or method the user called).
    """
    validate_parameter_constraints({name: constraints}, {name: value},
                                   caller_name=caller or entry_point())


def check_n_samples(n_samples, n_clusters, which=""):
    """Refuse fewer rows than clusters; ``which`` qualifies the rows counted in the message."""
    if n_samples < n_clusters:
        raise ValueError(f"n_samples={n_samples}{which} should be >= n_clusters={n_clusters}.")


def check_init_centers(init, n_init, n_clusters, n_features):
    """Return an ``init`` array as float64 centres, or None when ``init`` names a method.

    The array must have shape ``(n_clusters, n_features)``, and ``n_init`` be 1
    (or "auto", which then means 1): restarts from the same centres would
    all end alike.
    """
    if isinstance(init, str) or callable(init):
        return None
    if not (isinstance(n_init, str) or n_init == 1):
        raise ValueError(f"n_init must be 1 when init is an array of centres, got {n_init!r}.")
    centers = check_array(init, dtype=np.float64, order="C", input_name="init")
    if centers.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array must have shape (n_clusters, n_features)={(n_clusters, n_features)}, "
            f"got {centers.shape}."
        )
    return centers


# Constraints several classes and functions share, so their refusals match word for word.
RANDOM_STATE = ["random_state"]
N_CLUSTERS = [at_least(1)]
MAX_ITER = [at_least(1)]
TOL = [Interval(Real, 0, None, closed="left")]
BOUND = [Interval(Real, 0, None, closed="left"), dict]
# max_deviation: a band of width above 1 around a share bounds nothing; above 1 is a percentage.
SHARE_BOUND = [Share(), dict]
DEVIATION_KIND = [StrOptions(set(DEVIATION_KINDS))]
CLUSTER_WEIGHTING = [StrOptions({"auto", *CLUSTER_WEIGHTINGS})]
NUMERIC_SENSITIVE = [StrOptions({"auto"}), "boolean", "array-like"]
INTERSECTIONS = [None, "array-like"]
# What every estimator of the family takes, so that a refusal reads the same in each.
FAMILY_CONSTRAINTS = {"n_clusters": N_CLUSTERS, "max_iter": MAX_ITER, "tol": TOL,
                      "random_state": RANDOM_STATE}
