"""The bounds asked for, read against the data: share bands per value, mean bands per number.

A bound set holds, for every sensitive attribute, the dataset's mix (weighted
proportions of a categorical attribute's values, or the standardised values of
a numeric one) and the band each cluster must stay in; a categorical
attribute may also carry a balance target (``min_balance``: every cluster's
smallest group at least that fraction of its largest). Both the check of a
clustering (:func:`fairkm.metrics.check_bounds`) and the solver read it, so they
cannot disagree on what a bound means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairkm.utils._inputs import paired, read_weights
from fairkm.utils._options import ADDITIVE, MULTIPLICATIVE
from fairkm.utils._param_validation import (
    BOUND,
    DEVIATION_KIND,
    SHARE_BOUND,
    check_param,
    unit_interval,
)
from fairkm.utils._sensitive import (
    CATEGORICAL,
    check_sensitive_features,
    standardize_numeric,
    with_intersections,
)
from fairkm.utils._validation import MEDIAN, weight_unit

__all__ = ["Attribute", "BoundSet", "balances_asked", "bounds_asked", "check_kind",
           "no_bounds", "resolve_bounds", "solver_weights"]

# The weights the bounds see are rounded to this many significant bits (about 10 digits).
_WEIGHT_BITS = 32


def solver_weights(weights):
    """Return ``(weights / unit, unit)``: the weights as the bounds see them, and their unit.

    ``unit`` is the median positive weight (the lower one of an even count;
    :func:`fairkm.utils._validation.weight_unit`'s ``"median"`` variant), so a
    typical row weighs exactly 1 and weights all alike become exactly 1 (the
    counting arguments of unit weights apply). The ratios are then rounded to
    32 significant bits: weights scaled alike by any factor (x1e-6, normalised
    to sum 1) give ratios equal to an ulp or two, and rounded, the same bits,
    so the same numbers reach HiGHS, whose integer programmes stop at a node
    limit on a path that the last bits can change. Weights read to 10 digits
    move a share by at most 3e-10 of itself. None (unit weights) stays None.
    """
    if weights is None:
        return None, 1.0
    unit = weight_unit(weights, MEDIAN)
    mantissa, exponent = np.frexp(weights / unit)
    step = 2.0 ** _WEIGHT_BITS
    return np.ldexp(np.round(mantissa * step) / step, exponent), unit


@dataclass(frozen=True)
class Attribute:
    """One sensitive attribute and the band its clusters must stay in.

    Attributes
    ----------
    name : str
        The attribute's name.
    kind : {"categorical", "numeric"}
        Its kind.
    values : ndarray of shape (n_samples,)
        int64 codes into ``categories`` (categorical) or standardised float64
        values, mean 0 and variance 1 under the weights (numeric).
    categories : pandas.Index or None
        The observed values of a categorical attribute.
    proportions : ndarray of shape (n_values,) or None
        The dataset's (weighted) share of each value.
    delta : float
        The bound asked for: ``max_deviation`` (categorical) or
        ``numeric_bound`` (numeric); NaN when the attribute is not bounded.
    lower, upper : ndarray of shape (n_values,) or None
        Share band of each value (categorical; NaN-free, may lie outside
        [0, 1], in which case that side never binds; -1 and 2 when only a
        balance target was asked).
    balance : float
        The balance target ``min_balance`` (categorical): every cluster's
        smallest (weighted) count of a value present in the dataset at least
        ``balance`` times its largest; NaN when none was asked.
    """

    name: str
    kind: str
    values: np.ndarray
    categories: pd.Index | None
    proportions: np.ndarray | None
    delta: float
    lower: np.ndarray | None
    upper: np.ndarray | None
    balance: float = np.nan

    @property
    def bounded(self):
        """Whether a bound (a share band or a balance target) was asked for this attribute."""
        return not (np.isnan(self.delta) and np.isnan(self.balance))

    @property
    def balanced(self):
        """Whether a balance target above 0 binds this attribute (0 asks nothing)."""
        return self.balance > 0.0

    @property
    def present(self):
        """Which values the dataset holds (positive weight): those the balance compares."""
        return self.proportions > 0.0


@dataclass(frozen=True)
class BoundSet:
    """Every attribute's band, the kind of categorical bound, and the row weights.

    Attributes
    ----------
    attributes : list of Attribute
        In column order (intersections last).
    kind : {"additive", "multiplicative"}
        How ``max_deviation`` reads for categorical attributes.
    weights : ndarray of shape (n_samples,) or None
        Row weights in units of ``unit`` (see :func:`solver_weights`); None
        for unit weights.
    note : str
        What the bounds stand for when they are not the ones asked (the
        tightest bound whole rows meet, for ``max_deviation=0``); "" otherwise.
    unit : float
        The user's weight of a row of weight 1 in ``weights``: sizes and
        costs measured with ``weights`` times ``unit`` are the user's.
    """

    attributes: list
    kind: str
    weights: np.ndarray | None
    note: str = ""
    unit: float = 1.0

    @property
    def exact(self):
        """Whether some bounded categorical attribute asks for the dataset's exact mix (0)."""
        return any(a.delta == 0.0 for a in self.categorical())

    @property
    def n_samples(self):
        """Number of rows."""
        return self.attributes[0].values.shape[0]

    def categorical(self, bounded_only=True):
        """Return the categorical attributes (the bounded ones by default)."""
        return [a for a in self.attributes
                if a.kind == CATEGORICAL and (a.bounded or not bounded_only)]

    def numeric(self, bounded_only=True):
        """Return the numeric attributes (the bounded ones by default)."""
        return [a for a in self.attributes
                if a.kind != CATEGORICAL and (a.bounded or not bounded_only)]

    def with_floor(self, t, note=""):
        """Return the bound set with every bounded attribute's bound raised to at least ``t``.

        ``t``: one floor for every attribute, or ``{name: floor}`` for some.
        """
        attributes = []
        for a in self.attributes:
            floor = t.get(a.name, -np.inf) if isinstance(t, Mapping) else t
            if a.bounded and a.kind == CATEGORICAL and a.delta < floor:
                lower, upper = band(a.proportions, floor, self.kind)
                a = Attribute(a.name, a.kind, a.values, a.categories, a.proportions,
                              float(floor), lower, upper, a.balance)
            attributes.append(a)
        return BoundSet(attributes, self.kind, self.weights, note, self.unit)


def check_kind(kind, parameter="deviation_kind"):
    """Raise ``ValueError`` unless ``kind`` is "additive" or "multiplicative"."""
    check_param(parameter, kind, DEVIATION_KIND)


def band(proportions, delta, kind):
    """Share band ``(lower, upper)`` of each value for a bound ``delta`` of the given kind."""
    if kind == ADDITIVE:
        return proportions - delta, proportions + delta
    return (1.0 - delta) * proportions, proportions / (1.0 - delta)


def _check_delta(name, value, kind):
    check_param(name, value, SHARE_BOUND[:1] if name.startswith("max_deviation") else BOUND[:1])
    if kind == MULTIPLICATIVE and name.startswith("max_deviation") and not value < 1.0:
        raise ValueError(
            f"{name} must be < 1 with deviation_kind='multiplicative' (the band is "
            f"[(1 - delta) p, p / (1 - delta)]), got {value!r}."
        )
    return float(value)


def _refuse_empty(parameter, value, eligible, what):
    """Refuse an empty mapping: it would silently bound nothing."""
    if isinstance(value, Mapping) and not value:
        raise ValueError(
            f"{parameter}={{}} names no attribute, so it would bound nothing: give one number "
            f"for every {what} attribute, {{name: value}} for some of {list(eligible)}, or None."
        )


def _by_name(out, parameter, mapping, eligible, wrong_kind, read):
    """Fill ``out`` (every attribute's name) from ``{name: value}``, each value ``read``.

    A name that is not an attribute, or not of the kind the parameter applies
    to (``eligible``; ``wrong_kind`` says why), is refused by name.
    """
    names = list(out)
    for key, item in mapping.items():
        if key not in names:
            raise ValueError(
                f"{parameter} names {key!r}, which is not a sensitive attribute; the "
                f"attributes are {names}."
            )
        if key not in eligible:
            raise ValueError(f"{parameter} names {key!r}, which is {wrong_kind}")
        out[key] = read(key, item)
    return out


def _per_attribute(value, parameter, names, eligible, kind, what):
    """Map a bound (a number, a mapping name -> number, or None) onto the attributes."""
    out = dict.fromkeys(names, np.nan)
    if value is None:
        return out
    _refuse_empty(parameter, value, eligible, what)
    if isinstance(value, Mapping):
        wrong_kind = ("numeric; it bounds the shares of a categorical attribute's values "
                      "(fairkm.BoundedKMeans bounds a numeric attribute's mean with "
                      "numeric_bound)." if what == "categorical" else
                      "categorical; it bounds a numeric attribute's mean (max_deviation "
                      "bounds the shares of a categorical attribute's values).")
        return _by_name(out, parameter, value, eligible, wrong_kind,
                        lambda key, item: _check_delta(f"{parameter}[{key!r}]", item, kind))
    check_param(parameter, value, SHARE_BOUND if parameter == "max_deviation" else BOUND)
    value = _check_delta(parameter, value, kind)
    for name in eligible:
        out[name] = value
    return out


def bounds_asked(names, categorical, *, max_deviation, deviation_kind="additive",
                 numeric_bound=None, categorical_needed=False):
    """Map the bounds asked onto the attributes by name, refusing a bound that cannot apply.

    Reads the attributes' names and kinds only, so a caller can check the
    bounds before reading any value (the command line does, on its options).

    Parameters
    ----------
    names : list of str
        The sensitive attributes, intersections included.
    categorical : list of str
        The categorical ones among them.
    max_deviation, deviation_kind, numeric_bound
        As in :func:`resolve_bounds`.
    categorical_needed : bool, default=False
        Refuse a ``max_deviation`` that bounds no categorical attribute (an
        estimator without ``numeric_bound``, such as :class:`fairkm.FairKM`,
        would then bound nothing).

    Returns
    -------
    deltas, numeric_deltas : dict of str to float
        Each attribute's ``max_deviation`` and ``numeric_bound`` (NaN: none).

    Raises
    ------
    ValueError
        On a bound that is not a number >= 0 or a non-empty dict of them, a
        name that is not an attribute or not of the kind bounded, a multiplicative
        bound of 1 or more, or (with ``categorical_needed``) nothing to bound.
    """
    check_kind(deviation_kind)
    numeric = [name for name in names if name not in categorical]
    deltas = _per_attribute(max_deviation, "max_deviation", names, categorical,
                            deviation_kind, "categorical")
    numeric_deltas = _per_attribute(numeric_bound, "numeric_bound", names, numeric,
                                    "additive", "numeric")
    if categorical_needed and max_deviation is not None and np.isnan(
            list(deltas.values())).all():
        raise ValueError(
            f"max_deviation={max_deviation!r} bounds categorical attributes, and there is "
            "none: bound numeric ones with fairkm.BoundedKMeans's numeric_bound."
        )
    return deltas, numeric_deltas


_BALANCE = [unit_interval(high_closed=True)]


def balances_asked(names, categorical, min_balance):
    """Map a balance target onto the categorical attributes by name, refusing one that cannot apply.

    Parameters
    ----------
    names : list of str
        The sensitive attributes, intersections included.
    categorical : list of str
        The categorical ones among them.
    min_balance : float, dict or None
        A target in [0, 1] for every categorical attribute, ``{name: target}``
        for some, or None.

    Returns
    -------
    dict of str to float
        Each attribute's target (NaN: none).

    Raises
    ------
    ValueError
        On a target outside [0, 1], a name that is not an attribute or is
        numeric, an empty dict, or a number when no attribute is categorical.
    TypeError
        On a target that is neither a number, a dict nor None.
    """
    out = dict.fromkeys(names, np.nan)
    if min_balance is None:
        return out
    _refuse_empty("min_balance", min_balance, categorical, "categorical")
    if isinstance(min_balance, Mapping):
        def read(key, item):
            check_param(f"min_balance[{key!r}]", item, _BALANCE)
            return float(item)

        return _by_name(out, "min_balance", min_balance, categorical,
                        "numeric; a balance compares the counts of a categorical attribute's "
                        "values.", read)
    check_param("min_balance", min_balance, [*_BALANCE, dict])
    if not categorical:
        raise ValueError(
            f"min_balance={min_balance!r} asks a balance of categorical attributes, and "
            "there is none."
        )
    for name in categorical:
        out[name] = float(min_balance)
    return out


def resolve_bounds(sensitive_features, n_samples, *, max_deviation, deviation_kind="additive",
                   numeric_bound=None, sample_weight=None, numeric_sensitive="auto",
                   intersections=None, index=None, of="X", min_balance=None):
    """Validate and encode the sensitive features and the bounds asked for.

    Parameters
    ----------
    sensitive_features : array-like, Series or DataFrame
        One column per sensitive attribute.
    n_samples : int or None
        Expected number of rows (that of ``X``); checked when given.
    max_deviation : float, dict or None
        Bound on every categorical attribute (a float), on the named ones (a
        dict), or on none (None).
    deviation_kind : {"additive", "multiplicative"}, default="additive"
        How ``max_deviation`` reads.
    numeric_bound : float, dict or None, default=None
        Bound on the standardised cluster means of numeric attributes.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Row weights.
    numeric_sensitive : "auto", bool or list, default="auto"
        Which attributes are numeric (as in :class:`fairkm.FairKM`).
    intersections : sequence of sequence of str or None, default=None
        Combined attributes added as further categorical attributes.
    index : pandas.Index or None, default=None
        The index of the rows (``X``'s, or the labels'): pandas sensitive
        features and weights are paired with it by label
        (:func:`fairkm.utils._inputs.paired`). None pairs by position.
    of : str, default="X"
        What ``index`` belongs to, for the messages.
    min_balance : float, dict or None, default=None
        Balance target of every categorical attribute (a float in [0, 1]),
        of the named ones (a dict), or of none (None): every cluster's
        smallest count of a value present in the dataset at least that
        fraction of its largest.

    Returns
    -------
    BoundSet
    """
    check_kind(deviation_kind)
    sensitive_features = paired(sensitive_features, index, name="sensitive_features", of=of)
    sensitive_features = with_intersections(sensitive_features, intersections,
                                            numeric=numeric_sensitive)
    sf = check_sensitive_features(sensitive_features, n_samples=n_samples,
                                  numeric=numeric_sensitive)
    sample_weight = paired(sample_weight, index, name="sample_weight", of=of)
    weights, _ = read_weights(sample_weight, sf.n_samples,
                              length_of="sensitive_features" if n_samples is None else of)
    return bounds_from_features(sf, weights, max_deviation=max_deviation,
                                deviation_kind=deviation_kind, numeric_bound=numeric_bound,
                                min_balance=min_balance)


def bounds_from_features(sf, weights, *, max_deviation, deviation_kind="additive",
                         numeric_bound=None, categorical_needed=False, min_balance=None):
    """Build the bounds asked for on sensitive features already read (what a fit encoded).

    Parameters
    ----------
    sf : SensitiveFeatures
        As :func:`fairkm.utils._sensitive.check_sensitive_features` returns them
        (intersections included).
    weights : ndarray of shape (n_samples,) or None
        Checked row weights, in any unit (only their ratios matter: weights
        scaled alike give the same bounds, to the bit).
    max_deviation, deviation_kind, numeric_bound, categorical_needed
        As in :func:`bounds_asked`.
    min_balance : float, dict or None, default=None
        As in :func:`balances_asked`.

    Returns
    -------
    BoundSet
    """
    kind = deviation_kind
    categorical = [sf.names[j] for j in sf.select(CATEGORICAL)]
    balances = balances_asked(sf.names, categorical, min_balance)
    # A balance target alone asks no share band: max_deviation's default is not needed.
    deltas, numeric_deltas = bounds_asked(
        sf.names, categorical, max_deviation=max_deviation, deviation_kind=kind,
        numeric_bound=numeric_bound,
        categorical_needed=categorical_needed and min_balance is None)
    near_one, unit = solver_weights(weights)
    attributes = []
    for name, kind_j, column, values in zip(sf.names, sf.kinds, sf.columns, sf.categories,
                                            strict=True):
        if kind_j == CATEGORICAL:
            counts = np.bincount(column, weights=near_one, minlength=len(values))
            proportions = counts / counts.sum()
            delta = deltas[name]
            lower, upper = band(proportions, 0.0 if np.isnan(delta) else delta, kind)
            if np.isnan(delta) and not np.isnan(balances[name]):
                # No band: sides that never bind, so what reads the bands sees the balance alone.
                lower, upper = np.full_like(proportions, -1.0), np.full_like(proportions, 2.0)
            attributes.append(Attribute(name, kind_j, column, values, proportions, delta,
                                        lower, upper, balances[name]))
        else:
            mean, scale = standardize_numeric(column, name, near_one)
            attributes.append(Attribute(name, kind_j, (column - mean) / scale, None, None,
                                        numeric_deltas[name], None, None))
    return BoundSet(attributes, kind, near_one, unit=unit)


def no_bounds(weights, deviation_kind):
    """Return the empty bound set of a fit without sensitive features (weights read alike)."""
    near_one, unit = solver_weights(weights)
    return BoundSet([], deviation_kind, near_one, unit=unit)
