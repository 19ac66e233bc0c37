"""The contract both FairKM estimators share (in memory and on Dask).

Parameters and their checks, the fitted attributes, the convergence warning
and the fitted model as prediction reads it (:meth:`BaseFairKM._predictor`, a
:class:`fairkm.cluster._prediction.Predictor`) live here once; the subclasses bring
the data handling and the engine (compare scikit-learn's ``_BaseKMeans``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.random import sample_without_replacement

from fairkm.utils._call_site import warn
from fairkm.utils._inputs import warn_if_duplicate_centers
from fairkm.utils._options import CLUSTER_EXPONENTS
from fairkm.utils._param_validation import (
    CLUSTER_WEIGHTING,
    FAMILY_CONSTRAINTS,
    INTERSECTIONS,
    NUMERIC_SENSITIVE,
    Interval,
    Share,
    StrOptions,
    at_least,
    check_init_centers,
    check_n_samples,
)
from fairkm.utils._sensitive import with_intersections

from ._engine import Stats
from ._mixin import SensitiveFeaturesMixin
from ._prediction import Predictor
from ._weighting import AbsoluteWeight, CostBudget, PaperWeight, RelativeWeight, UnfairnessTarget

__all__ = ["INIT_SIZE", "BaseFairKM", "BlindClustering", "FitOutcome", "FitParameters",
           "SensitiveAttributes"]

# k-means++ seeds on a sample of this many rows when there are more: its cost
# grows as n * k, and the sweeps that follow make up for seeds drawn from a sample.
INIT_SIZE = 100_000


def _ratio(value, reference):
    """``value / reference``, 1 for 0 / 0 (a clustering with no spread at all)."""
    if reference == 0:
        return 1.0 if value == 0 else math.inf
    return value / reference


@dataclass(frozen=True)
class SensitiveAttributes:
    """What a fit learned of the sensitive attributes: ``model.sensitive_attributes_``.

    Attributes
    ----------
    names : ndarray of shape (n_attributes,)
        Names of the sensitive attributes (column names, or ``"s0"``, ``"s1"``...).
    kinds : ndarray of shape (n_attributes,)
        ``"categorical"`` or ``"numeric"`` for each attribute.
    categories : list of ndarray or None
        Sorted observed values of each categorical attribute (``None`` for numeric).
    proportions : list of ndarray or None
        The dataset's share of each of those values (``None`` for numeric).
    means, scales : ndarray of shape (n_attributes,)
        Mean and standard deviation standardising each numeric attribute
        (NaN for categorical ones).
    """

    names: np.ndarray
    kinds: np.ndarray
    categories: list
    proportions: list
    means: np.ndarray
    scales: np.ndarray


@dataclass(frozen=True)
class BlindClustering:
    """The S-blind clustering a fit weighed fairness against: ``model.blind_clustering_``.

    Attributes
    ----------
    inertia : float
        Its K-Means term.
    attribute_fairness : ndarray of shape (n_attributes,)
        Each attribute's fairness term (weight 1) in it.
    cluster_deviation : ndarray of shape (n_attributes, n_clusters)
        Each of its clusters' distance from the dataset's mix, per attribute,
        as ``cluster_deviation_``.
    """

    inertia: float
    attribute_fairness: np.ndarray
    cluster_deviation: np.ndarray


@dataclass(frozen=True)
class FitOutcome:
    """What a fit ends with, whichever engine ran it: the fitted attributes are read from it.

    ``stats`` are the final labels' statistics (recomputed, not the moves'
    bookkeeping) and ``terms`` the kernels' per-attribute constants they are
    read with; ``unit`` names an iteration ("sweeps" in memory, "rounds" on
    Dask) for the convergence warning; ``weight_unit`` is the power of two the
    sample weights were divided by, and ``row_weight`` the mean weight of the
    rows of positive weight, in the user's unit (1 without weights).
    """

    labels: object
    stats: Stats
    terms: object
    inertia: float
    fairness: float
    history: object
    n_iter: int
    converged: bool
    unit: str
    weighting: object
    encoding: object
    cluster_exponent: int
    weight_unit: float = 1.0
    row_weight: float = 1.0
    threads: int = 1  # the threads the fit decided for its parallel kernels


@dataclass(frozen=True)
class FitParameters:
    """The parameters resolved against the data: what a fit runs with.

    ``policy`` says how much fairness counts (:mod:`fairkm.cluster._weighting`), ``init_centers``
    None when ``init`` names a method, ``attribute_weights`` one per attribute,
    ``cluster_exponent`` the ``e`` of ``(|C|/n)^e``, ``n_init`` the starts and
    ``bounds`` what ``max_deviation`` asks for (None: no bounds).
    """

    policy: object
    init_centers: object
    attribute_weights: np.ndarray
    cluster_exponent: int
    n_init: int = 1
    bounds: object = None


class BaseFairKM(SensitiveFeaturesMixin, BaseEstimator):
    """Parameters, checks, fitted attributes and prediction shared by the FairKM estimators.

    The parameters the two share are set here; a subclass with more defines
    ``__init__`` (these plus its own, passed on to this one). Subclasses define
    ``fit``; ``fit`` starts with :meth:`_validate_params`, checks the
    parameters against the data in :meth:`_check_params_vs_input` and ends
    with :meth:`_set_fitted`.

    Metadata routing and ``fit_predict`` come from :class:`SensitiveFeaturesMixin`.
    """

    _parameter_constraints = {
        **FAMILY_CONSTRAINTS,
        "fairness_weight": [StrOptions({"auto", "paper"}), Interval(Real, 0, None, closed="left")],
        "relative_weight": [Interval(Real, 0, None, closed="left")],
        "max_cost": [None, Share(closed="right")],
        "max_unfairness": [None, Share(closed="neither")],
        "attribute_weights": [None, dict, "array-like"],
        "cluster_weighting": CLUSTER_WEIGHTING,
        "numeric_sensitive": NUMERIC_SENSITIVE,
        "intersections": INTERSECTIONS,
        "init": [StrOptions({"k-means++", "random"}), "array-like"],
        "init_size": [None, at_least(1)],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        fairness_weight="auto",
        relative_weight=1.0,
        max_cost=None,
        max_unfairness=None,
        attribute_weights=None,
        cluster_weighting="auto",
        numeric_sensitive="auto",
        intersections=None,
        init="k-means++",
        init_size=None,
        max_iter=1000,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.fairness_weight = fairness_weight
        self.relative_weight = relative_weight
        self.max_cost = max_cost
        self.max_unfairness = max_unfairness
        self.attribute_weights = attribute_weights
        self.cluster_weighting = cluster_weighting
        self.numeric_sensitive = numeric_sensitive
        self.intersections = intersections
        self.init = init
        self.init_size = init_size
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ validation

    def _check_params_vs_input(self, n_samples, n_features, names):
        """Check the parameters against the data; return the :class:`FitParameters`.

        ``names`` are the sensitive attributes read (empty without any).
        """
        check_n_samples(n_samples, self.n_clusters)
        # The Dask estimator has no n_init: it makes one start.
        init_centers = check_init_centers(self.init, getattr(self, "n_init", 1), self.n_clusters,
                                          n_features)
        policy = self._policy(n_samples)
        return FitParameters(policy, init_centers, self._check_attribute_weights(names),
                             policy.cluster_exponent(self.cluster_weighting))

    def _seeding_rows(self, n_samples, seed):
        """Rows k-means++ seeds on: None for all of them, else a sorted seeded sample."""
        size = (max(INIT_SIZE, 100 * self.n_clusters) if self.init_size is None
                else self.init_size)
        size = min(n_samples, max(size, self.n_clusters))
        if size == n_samples:
            return None
        return np.sort(sample_without_replacement(n_samples, size, random_state=seed))

    def _policy(self, n_samples):
        """Resolve ``fairness_weight``, ``relative_weight`` and the budgets into a policy."""
        weight = self.fairness_weight
        budgets = {name: getattr(self, name) for name in ("max_cost", "max_unfairness")}
        given = [name for name, value in budgets.items() if value is not None]
        if len(given) > 1:
            raise ValueError(
                "max_cost and max_unfairness cannot both be set: give one budget, "
                f"got max_cost={budgets['max_cost']!r}, "
                f"max_unfairness={budgets['max_unfairness']!r}."
            )
        if isinstance(weight, str) and weight == "auto":
            if not given:
                return RelativeWeight(float(self.relative_weight))
            if self.relative_weight != 1.0:
                raise ValueError(
                    f"{given[0]} chooses relative_weight itself; leave relative_weight "
                    f"at its default, got relative_weight={self.relative_weight!r}."
                )
            budget = CostBudget if given[0] == "max_cost" else UnfairnessTarget
            return budget(float(budgets[given[0]]))
        unused = [(name, budgets[name]) for name in given]
        if self.relative_weight != 1.0:
            unused.append(("relative_weight", self.relative_weight))
        for name, value in unused:
            raise ValueError(
                f"{name} applies to fairness_weight='auto' only (a weight relative to the "
                f"S-blind clustering); with fairness_weight={weight!r} it would be ignored, "
                f"got {name}={value!r}."
            )
        if isinstance(weight, str):  # "paper"
            return PaperWeight.of(n_samples, self.n_clusters)
        return AbsoluteWeight(float(weight))

    def _check_attribute_weights(self, names):
        """Return one weight per attribute from ``attribute_weights``."""
        weights = self.attribute_weights
        if weights is None:
            return np.ones(len(names))
        if isinstance(weights, dict):
            unknown = [key for key in weights if key not in names]
            if unknown:
                raise ValueError(
                    f"attribute_weights names {unknown}, which are not sensitive attributes; "
                    f"the attributes are {list(names)}."
                )
            values = np.array([weights.get(name, 1.0) for name in names], dtype=object)
        else:
            values = np.asarray(weights, dtype=object)
            if values.ndim != 1 or values.shape[0] != len(names):
                raise ValueError(
                    f"attribute_weights must have one weight per sensitive attribute "
                    f"({len(names)}), got shape {values.shape}."
                )
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"attribute_weights must be numbers, got {list(values)!r}."
            ) from exc
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError(
                f"attribute_weights must be finite and >= 0, got {values.tolist()}."
            )
        return values

    # ------------------------------------------------------------------ fitted state

    def _set_fitted(self, outcome):
        """Set the fitted attributes from a :class:`FitOutcome`; warn if the run did not converge.

        The outcome's ``weight_unit`` is the power of two the sample weights
        were divided by for the run: every weighted sum is multiplied back by it
        (exactly), so the model reads as if fitted on the user's weights.
        """
        stats, terms, weighting, encoding = (outcome.stats, outcome.terms, outcome.weighting,
                                             outcome.encoding)
        inertia, history, weight_unit = outcome.inertia, outcome.history, outcome.weight_unit
        if weight_unit != 1.0:
            inertia, history = inertia * weight_unit, np.asarray(history) * weight_unit
            weighting = weighting.in_weight_unit(weight_unit)
            encoding = replace(encoding, n_samples=encoding.n_samples * weight_unit)
        if not outcome.converged:
            warn(
                f"FairKM did not converge within max_iter={self.max_iter} {outcome.unit}; "
                "increase max_iter or tol.",
                ConvergenceWarning
            )
        self.labels_ = outcome.labels
        self.cluster_centers_ = stats.cluster_centers()
        warn_if_duplicate_centers(type(self).__name__, self.cluster_centers_, self.n_clusters)
        self.inertia_ = float(inertia)
        self.fairness_ = float(outcome.fairness)
        self.objective_ = self.inertia_ + weighting.fairness_weight * self.fairness_
        self.objective_history_ = np.asarray(history)
        self.n_iter_ = int(outcome.n_iter)
        self.fairness_weight_ = weighting.fairness_weight
        self.attribute_weights_ = weighting.attribute_weights
        self.relative_weight_ = weighting.relative_weight
        self.refit_params_ = dict(weighting.refit_params)
        self.blind_clustering_ = (
            BlindClustering(weighting.blind_inertia, weighting.blind_fairness,
                            weighting.blind_deviation)
            if np.isfinite(weighting.blind_inertia) else None)
        self.attribute_fairness_ = encoding.in_column_order(stats.attribute_fairness(terms))
        self.cost_increase_ = _ratio(self.inertia_, weighting.blind_inertia) - 1.0
        self.cluster_deviation_ = encoding.in_column_order(stats.cluster_deviation(terms))
        self.unfairness_ratio_ = weighting.unfairness(self.cluster_deviation_)
        self.cluster_weighting_ = {e: name for name, e in CLUSTER_EXPONENTS.items()}[
            outcome.cluster_exponent
        ]
        self.sensitive_attributes_ = SensitiveAttributes(
            np.array(encoding.names, dtype=object), np.array(encoding.kinds, dtype=object),
            list(encoding.categories), list(encoding.proportions), encoding.means,
            encoding.scales)
        self._encoding = encoding
        self._fitted_stats = (stats.counts * weight_unit, stats.value_counts * weight_unit,
                              stats.num_sums * weight_unit)
        self._row_weight = outcome.row_weight
        self.n_threads_ = outcome.threads

    @property
    def _n_features_out(self):
        """Number of transformed output features (for ``get_feature_names_out``)."""
        return self.cluster_centers_.shape[0]

    def _warn_if_predicting_blind(self):
        """Warn that new rows without sensitive features go to their nearest centre.

        Only for a model fitted with sensitive features and a positive weight;
        the warning points at the caller of ``predict`` or ``score``.
        """
        if self._encoding.n_attributes and self.fairness_weight_:
            warn(
                "FairKM was fitted with sensitive features "
                f"{list(self.sensitive_attributes_.names)}, but none were given: each row goes "
                "to its nearest centre, which ignores fairness (most of what the fit bought "
                "is lost on new rows). Pass sensitive_features as in fit.",
                UserWarning
            )

    def _predictor(self):
        """Return the fitted model as :meth:`predict` prices a new row: one of the mean weight.

        Counted in rows of the fit's mean weight, the statistics, the dataset's
        total and the fairness weight are the same for weights scaled alike, so
        are the predictions; a new row weighing 1 in the weights' own unit would
        weigh nothing against weights normalised to sum 1, and a thousand rows
        against weights of a thousand.
        """
        row = self._row_weight
        counts, value_counts, num_sums = (part / row for part in self._fitted_stats)
        encoding = (self._encoding if row == 1.0 else
                    replace(self._encoding, n_samples=self._encoding.n_samples / row))
        return Predictor(self.cluster_centers_, encoding, self.attribute_weights_,
                         self.fairness_weight_ / row, self.intersections,
                         CLUSTER_EXPONENTS[self.cluster_weighting_], counts, value_counts,
                         num_sums)

    def _with_intersections(self, sensitive_features):
        """Return the sensitive features with the ``intersections`` appended as attributes."""
        return with_intersections(sensitive_features, self.intersections,
                                  numeric=self.numeric_sensitive)
