"""What each parameter accepts, declared once per class and checked by one rule.

Every estimator lists its constructor's parameters in ``_parameter_constraints``
(compare scikit-learn's ``_parameter_constraints``): a list of what each may
be, any one of which will do. :func:`validate_params` checks them all when
``fit`` starts, before the data are read, and a refusal says in the same words
across the family what the parameter accepts and what it got::

    n_clusters must be an int >= 1, got 0.
    init must be 'k-means++', 'random' or an array of shape (n_clusters, n_features),
    got 'kmeans'.

Checks that need the data (``n_samples >= n_clusters``, the shape of an
``init`` array, names of attributes) or several parameters together live in
each estimator's ``_check_params_vs_input``, with the shared ones here
(:func:`check_n_samples`, :func:`check_init_centers`). Functions with the same
parameters (``fair_assignment``) call :func:`check_param` with the same
constraints, so their refusals read the same.

Why not scikit-learn's own ``sklearn.utils._param_validation``: it is private
and has changed between releases; this one is small, and its messages name
the parameter first, as every other error of the library does.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_array

from fairkm.exceptions import InvalidParameterError
from fairkm.utils._options import DEVIATION_KINDS

__all__ = [
    "ArrayLike",
    "Hidden",
    "Instance",
    "Integer",
    "Options",
    "Real",
    "check_init_centers",
    "check_n_samples",
    "check_param",
    "validate_params",
]


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


# The compiled kernels and NumPy hold counts in int64: a larger int would pass
# a check of ">= 1" and fail later inside them (an OverflowError, a numba TypingError).
LARGEST_INT = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Integer:
    """An int (not a bool) ``>= low``, and ``<= high`` if given (never above int64's range)."""

    low: int
    high: int | None = None

    def accepts(self, value):
        high = LARGEST_INT if self.high is None else self.high
        return _is_int(value) and self.low <= value <= high

    def __str__(self):
        if self.high is None:
            return f"an int >= {self.low}"
        return f"an int in [{self.low}, {self.high}]"


@dataclass(frozen=True)
class Real:
    """A finite real number (ints included, bools not) between ``low`` and ``high``.

    ``low`` is included unless ``low_open``; ``high`` (None: no upper limit)
    is excluded unless ``high_closed``.
    """

    low: float = 0.0
    high: float | None = None
    low_open: bool = False
    high_closed: bool = False

    def accepts(self, value):
        # An int is finite however large (np.isfinite would overflow on it).
        if not _is_real(value) or not (_is_int(value) or math.isfinite(value)):
            return False
        above = value > self.low if self.low_open else value >= self.low
        if self.high is None:
            return above
        return above and (value <= self.high if self.high_closed else value < self.high)

    def __str__(self):
        if self.high is None:
            return f"a finite float {'>' if self.low_open else '>='} {self.low:g}"
        return (f"a float in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}"
                f"{']' if self.high_closed else ')'}")


class Options:
    """One of the given strings."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value):
        return isinstance(value, str) and value in self.values

    def __str__(self):
        return _either([repr(v) for v in self.values])


@dataclass(frozen=True)
class Instance:
    """An instance of ``types``, described to the user as ``description``."""

    types: type | tuple
    description: str

    def accepts(self, value):
        if isinstance(value, (bool, np.bool_)):  # a bool is an int to Python, not to us
            return self.types is bool
        return isinstance(value, self.types)

    def __str__(self):
        return self.description


@dataclass(frozen=True)
class ArrayLike:
    """An array or a sequence (not a string, a mapping, a scalar or a callable).

    What it must hold is checked against the data; ``description`` says it.
    """

    description: str = "an array"

    def accepts(self, value):
        if isinstance(value, (str, bytes, Mapping)) or callable(value) or np.isscalar(value):
            return False
        return hasattr(value, "__array__") or hasattr(value, "__len__")

    def __str__(self):
        return self.description


@dataclass(frozen=True)
class Hidden:
    """Accepted but not offered in messages: a deprecated parameter's sentinel default."""

    constraint: object

    def accepts(self, value):
        return self.constraint.accepts(value)


class _NoneConstraint:
    def accepts(self, value):
        return value is None

    def __str__(self):
        return "None"


def _as_constraint(constraint):
    return _NoneConstraint() if constraint is None else constraint


def _either(descriptions):
    if len(descriptions) == 1:
        return descriptions[0]
    return f"{', '.join(descriptions[:-1])} or {descriptions[-1]}"


def _shown(value):
    """Return the value as a message shows it: an array by its shape, anything else briefly."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return reprlib.repr(value)


def check_param(name, value, constraints):
    """Raise :class:`InvalidParameterError` unless ``value`` meets one of ``constraints``.

    Parameters
    ----------
    name : str
        The parameter, first word of the message.
    value : object
        What the caller passed.
    constraints : list
        What the parameter accepts: ``None`` and instances of the classes above.
    """
    constraints = [_as_constraint(c) for c in constraints]
    if any(c.accepts(value) for c in constraints):
        return
    offered = [text for c in constraints if not isinstance(c, Hidden)
               for text in (map(repr, c.values) if isinstance(c, Options) else [str(c)])]
    beyond = (" (larger than 2**63 - 1, the largest count the engine holds)"
              if _is_int(value) and value > LARGEST_INT else "")
    raise InvalidParameterError(
        f"{name} must be {_either(offered)}, got {_shown(value)}{beyond}.")


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


def validate_params(estimator):
    """Check every constructor parameter of ``estimator`` against its class's constraints."""
    constraints = type(estimator)._parameter_constraints
    for name, value in estimator.get_params(deep=False).items():
        check_param(name, value, constraints[name])


# Constraints several classes share, so their messages match word for word.
RANDOM_STATE = [None, Integer(0, 2**32 - 1), Instance(np.random.RandomState, "a RandomState")]
N_CLUSTERS = [Integer(1)]
MAX_ITER = [Integer(1)]
TOL = [Real()]
BOUND = [Real(), Instance(Mapping, "a dict {attribute name: float}")]
DEVIATION_KIND = [Options(*DEVIATION_KINDS)]
NUMERIC_SENSITIVE = [Options("auto"), Instance(bool, "a bool"),
                     ArrayLike("a list of attribute names or positions")]
INTERSECTIONS = [None, ArrayLike("a list of tuples of attribute names")]
