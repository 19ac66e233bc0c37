"""BoundedKMeans: K-Means whose every cluster keeps the dataset's mix within stated bounds."""

from __future__ import annotations

import contextlib
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm import tqdm

from fairkm.bounds import (
    SOLVER_CONSTRAINTS,
    decided_threads,
    relaxed_centers,
    solve,
    sq_distances,
)
from fairkm.exceptions import BoundNotMetWarning
from fairkm.metrics import bounds_from_features, enforced, no_bounds, resolve_bounds
from fairkm.utils._call_site import warn
from fairkm.utils._inputs import (
    feature_names,
    read_fit,
    row_index,
    warn_if_duplicate_centers,
    warn_on_fit,
)
from fairkm.utils._param_validation import (
    BOUND,
    DEVIATION_KIND,
    INTERSECTIONS,
    N_CLUSTERS,
    NUMERIC_SENSITIVE,
    StrOptions,
    at_least,
    check_init_centers,
    check_n_samples,
    unit_interval,
)
from fairkm.utils._progress import listening
from fairkm.utils._sensitive import check_sensitive_features, with_intersections

from ._docstrings import fill_estimator_docstring
from ._mixin import SensitiveFeaturesMixin

__all__ = ["BoundedKMeans"]

_AUTO_STARTS = 3  # k-means++ seedings with n_init="auto"


@fill_estimator_docstring
class BoundedKMeans(SensitiveFeaturesMixin, BaseEstimator):
    """K-Means in which every cluster's mix stays within bounds of the dataset's.

    For every cluster and every value ``v`` of every categorical sensitive
    attribute, ``|share_C(v) - share_X(v)| <= max_deviation`` (additive) or
    ``(1 - max_deviation) p <= share_C(v) <= p / (1 - max_deviation)``
    (multiplicative, as Bera et al. 2019), and optionally
    ``|mean_C(z)| <= numeric_bound`` for numeric attributes standardised over
    the dataset, or (``min_balance``) every cluster's balance at least a
    target, as Chierichetti et al. (2017) and their successors state it: the
    cheapest clustering it finds under the bounds, whatever the mix inside
    them. From FairKM's centres (the default; or k-means++
    seeds, or given centres) it makes the bounded assignment at the least
    K-Means cost (:func:`fair_assignment`: the linear relaxation, solved by
    scipy's HiGHS, rounded to whole rows by a local search), then alternates
    centre updates with the same assignment by local moves while the cost
    falls, and certifies the end with one more assignment on every row; the
    cheapest clustering over the ``n_init`` starts is kept.

    Parameters
    ----------
    %(n_clusters)s
    max_deviation : "auto", float, dict or None, default="auto"
        The bound on every categorical attribute, ``{name: bound}`` for some
        (the others are reported, not bounded), or None. 0 asks for the
        dataset's exact mix as far as whole rows allow (see
        :func:`fair_assignment`). "auto": 0.05, or None when ``min_balance``
        is given (a balance target alone).
    %(deviation_kind)s
    numeric_bound : float, dict or None, default=None
        Bound on the clusters' standardised means of numeric attributes
        (standard deviations); None leaves them free.
    min_balance : float, dict or None, default=None
        A balance target in [0, 1] for every categorical attribute,
        ``{name: target}`` for some, or None: every cluster's smallest
        (weighted) count of a value present in the dataset at least that
        fraction of its largest (0 when it lacks one), a one-sided floor; for
        a binary attribute, each value's share in ``[b / (1 + b), 1 / (1 +
        b)]``. Multi-valued attributes compare every pair of values. It may
        be combined with ``max_deviation``.
    %(numeric_sensitive)s
    intersections : sequence of sequence of str, default=None
        Combined attributes (``[("sex", "race")]``), bounded like the others.
    init : {"fairkm", "k-means++"} or array-like of shape (n_clusters, n_features), \
            default="fairkm"
        Starting centres: those of :class:`fairkm.FairKM` with its defaults
        (already near the bounds, so the bounded assignment from them is
        cheap), scikit-learn's k-means++ seeding (whose centres first move
        to where the bound is cheap: the relaxation alternated with its
        fractional clusters' means), or given centres
        (``KMeans(...).cluster_centers_``, say).
    n_init : "auto" or int, default="auto"
        Number of starts (FairKM fits or k-means++ seedings, each from its own
        seed), each alternated to the end; the clustering with the smallest
        violation, then the lowest cost, is kept. Must be 1 with given
        centres. "auto": 1 with "fairkm" or given centres, 3 with k-means++.
    max_iter : int, default=20
        Number of bounded assignments per seeding at most.
    tol : float, default=1e-4
        Stop when an assignment lowers the K-Means cost by no more than
        ``tol`` times its value.
    max_lp_variables : int, default=300_000
        Largest linear programme solved at once (rows x clusters); beyond it,
        the rows are priced by the programme's duals and only those near a
        tie solved one by one (see :func:`fair_assignment`).
    random_state : int, RandomState instance or None, default=None
        Seeds FairKM or k-means++. The same value gives identical labels.
    progress : bool, default=True
        Show a progress bar (tqdm) on standard error, one step per bounded
        assignment, when the fit lasts more than 3 seconds and standard
        error is a terminal.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training row.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The clusters' (weighted) means.
    inertia_ : float
        K-Means cost of ``labels_`` (sum of weighted squared distances).
    n_iter_ : int
        Number of bounded assignments of the kept seeding.
    n_threads_ : int
        The threads the fit's parallel kernels ran on (the assignments'
        pricing passes), decided once at its start: at most numba's threads
        and the CPUs the process may use, or ``FAIRKM_NUM_THREADS``.
        ``predict`` decides its own, once per call.
    cost_history_ : tuple of float
        ``inertia_`` after each assignment of the kept seeding.
    bounds_check_ : BoundsCheck
        The bounds measured on ``labels_``: ``satisfied``, ``violation``,
        ``table`` (per attribute: bound, deviation, violation, worst cluster)
        and ``summary()``.
    violation_ : float
        Largest violation left after rounding (0 when every bound holds).
    deviation_ : pandas.Series
        Per attribute, the largest deviation reached (in the bound's units).
    max_deviation_ : float, dict or None
        The categorical bound enforced: ``max_deviation``, except that an
        attribute asked at 0 holds the bound whole rows allowed (see
        :func:`fair_assignment`); None without a categorical bound.
    lp_cost_ : float
        The last linear relaxation's optimum (see :class:`BoundedAssignment`).
    lower_bound_ : float
        A proven lower bound on the cost, to the centres of the last
        assignment, of any assignment meeting the bounds (the certificate of
        :class:`BoundedAssignment`).
    exact_ : bool
        Whether the last programme was solved on every row.
    %(fitted_features)s

    See Also
    --------
    fair_assignment : One bounded assignment (or alternation) from given centres.
    check_bounds : Measure any clustering against the bounds.
    fairkm.FairKM : Fairer on average, without a per-cluster guarantee.

    Notes
    -----
    The first and last assignments of each start solve a linear programme
    with one variable per row and cluster (by prices beyond
    ``max_lp_variables``) and round it by local search; those in between
    move rows from the previous clustering only (``docs/bounds.md`` times
    them on Adult). The relaxation is always feasible,
    so only whole rows can make a bound impossible; then
    :class:`InfeasibleBoundError` says the tightest bound found that can be
    met.

    Pick :class:`fairkm.FairKM` with ``max_deviation`` instead to keep
    FairKM's fairness inside the bound: it changes FairKM's clustering only
    where the bound asks, and never leaves an attribute less fair than
    FairKM did; this estimator spends the room inside the bound on K-Means
    cost.

    Examples
    --------
    >>> import numpy as np
    >>> from fairkm.bounds import BoundedKMeans
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(0, 1, (40, 2)), rng.normal(6, 1, (40, 2))]
    >>> group = np.r_[np.zeros(35), np.ones(10), np.zeros(35)].astype(int)
    >>> model = BoundedKMeans(n_clusters=2, max_deviation=0.05, random_state=0)
    >>> model = model.fit(X, sensitive_features=group)
    >>> model.bounds_check_.satisfied
    True
    """

    _parameter_constraints = {
        "n_clusters": N_CLUSTERS,
        "max_deviation": [StrOptions({"auto"}), None, *BOUND],
        "deviation_kind": DEVIATION_KIND,
        "numeric_bound": [None, *BOUND],
        "min_balance": [None, unit_interval(high_closed=True), dict],
        "numeric_sensitive": NUMERIC_SENSITIVE,
        "intersections": INTERSECTIONS,
        "init": [StrOptions({"fairkm", "k-means++"}), "array-like"],
        "n_init": [StrOptions({"auto"}), at_least(1)],
        **SOLVER_CONSTRAINTS,
        "progress": ["boolean"],
    }

    def __init__(self, n_clusters=8, *, max_deviation="auto", deviation_kind="additive",
                 numeric_bound=None, min_balance=None, numeric_sensitive="auto",
                 intersections=None, init="fairkm", n_init="auto", max_iter=20, tol=1e-4,
                 max_lp_variables=300_000, random_state=None, progress=True):
        self.n_clusters = n_clusters
        self.max_deviation = max_deviation
        self.deviation_kind = deviation_kind
        self.numeric_bound = numeric_bound
        self.min_balance = min_balance
        self.numeric_sensitive = numeric_sensitive
        self.intersections = intersections
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.max_lp_variables = max_lp_variables
        self.random_state = random_state
        self.progress = progress

    def _check_params_vs_input(self, X, n_positive):
        """Check the parameters against ``X``; return the ``init`` centres (None: seeded).

        ``n_positive``: the rows of positive weight, which alone fill clusters.
        """
        check_n_samples(X.shape[0], self.n_clusters)
        check_n_samples(n_positive, self.n_clusters, " (of positive weight)")
        return check_init_centers(self.init, self.n_init, self.n_clusters, X.shape[1])

    def _start(self, X, seed, given, bounds, sensitive_features, bounded):
        """Return the starting centres of one start (seeded with the bounds' weights)."""
        if given is not None:
            return given
        if self.init == "fairkm":
            from . import FairKM

            model = FairKM(self.n_clusters, numeric_sensitive=self.numeric_sensitive,
                           intersections=self.intersections, random_state=seed)
            with warnings.catch_warnings():
                # FairKM's words are about its own clustering, not the bounded one; those
                # about the data (and duplicate centres) this fit says once itself.
                warnings.simplefilter("ignore", UserWarning)
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(X, sensitive_features=sensitive_features, sample_weight=bounds.weights)
            return model.cluster_centers_
        centers, _ = kmeans_plusplus(X, self.n_clusters, sample_weight=bounds.weights,
                                     random_state=seed)
        if bounded:
            centers = relaxed_centers(X, centers, bounds, max_iter=self.max_iter, tol=self.tol,
                                      max_lp_variables=self.max_lp_variables)
        return centers

    def _features(self, sensitive_features, n_samples):
        """Read the sensitive features, intersections included (None without)."""
        if sensitive_features is None:
            return None
        return check_sensitive_features(
            with_intersections(sensitive_features, self.intersections,
                               numeric=self.numeric_sensitive),
            n_samples=n_samples, numeric=self.numeric_sensitive,
        )

    def _max_deviation(self):
        """Return ``max_deviation`` with "auto" resolved (0.05; None beside ``min_balance``)."""
        if isinstance(self.max_deviation, str):
            return 0.05 if self.min_balance is None else None
        return self.max_deviation

    def _bounds(self, features, weights, deviation_kind):
        """Return the bounds asked for on the features read (none without), with the weights."""
        if features is None:
            return no_bounds(weights, deviation_kind)
        return bounds_from_features(features, weights, max_deviation=self._max_deviation(),
                                    deviation_kind=deviation_kind,
                                    numeric_bound=self.numeric_bound,
                                    min_balance=self.min_balance)

    def fit(self, X, y=None, *, sensitive_features=None, sample_weight=None):
        """Cluster ``X`` with every cluster's mix within the bounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Non-sensitive features. A DataFrame pairs pandas
            ``sensitive_features`` and ``sample_weight`` with its rows by
            index label.
        y : Ignored
            Not used, present for API consistency (given without
            ``sensitive_features``, it warns that the attributes were passed
            in its place).
        sensitive_features : array-like, Series or DataFrame, default=None
            One column per sensitive attribute. None: no bounds (plain
            K-Means by alternating assignments).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, in the cost and in the shares, read to 10
            significant digits (weights scaled alike give the same labels);
            costs are reported in their unit. Rows of weight 0 take no part
            and go to their nearest centre.

        Returns
        -------
        self : BoundedKMeans
            The fitted estimator.

        Raises
        ------
        InfeasibleBoundError
            When no assignment to non-empty clusters can meet the bounds.
        """
        self._validate_params()
        deviation_kind = self.deviation_kind
        inputs = read_fit(self, X, y, sensitive_features, sample_weight,
                          lambda X: validate_data(self, X, dtype=np.float64, order="C"))
        X, sensitive_features, sample_weight = (inputs.X, inputs.sensitive_features,
                                                inputs.sample_weight)
        given = self._check_params_vs_input(X, inputs.n_positive)
        features = self._features(sensitive_features, X.shape[0])
        warn_on_fit(X, feature_names(self, X.shape[1]), features,
                    kinds_by_dtype=isinstance(self.numeric_sensitive, str))
        bounds = self._bounds(features, sample_weight, deviation_kind)
        rng = check_random_state(self.random_state)
        n_init = self.n_init
        if isinstance(n_init, str):
            n_init = 3 if given is None and self.init == "k-means++" else 1
        seeds = rng.randint(np.iinfo(np.int32).max, size=n_init)
        bounded = bool(bounds.categorical() or bounds.numeric())
        best = None
        # One thread count for every parallel kernel of the fit (the assignments' passes).
        with _progress_bar(self.progress), decided_threads() as n_threads:
            for seed in seeds:
                centers = self._start(X, int(seed), given, bounds, sensitive_features, bounded)
                result = solve(X, centers, bounds, max_iter=self.max_iter, tol=self.tol,
                               max_lp_variables=self.max_lp_variables, warn=False)
                key = (round(result.violation, 9), result.inertia)
                if best is None or key < (round(best.violation, 9), best.inertia):
                    best = result
        self.labels_ = best.labels
        self.cluster_centers_ = best.centers
        warn_if_duplicate_centers(type(self).__name__, best.centers, self.n_clusters)
        self.inertia_ = best.inertia
        self.n_iter_ = best.n_iter
        self.n_threads_ = n_threads
        self.cost_history_ = best.cost_history
        self.bounds_check_ = best.check
        self.violation_ = best.violation
        self.deviation_ = best.deviation
        self.lp_cost_ = best.lp_cost
        self.lower_bound_ = best.lower_bound
        self.exact_ = best.exact
        self.max_deviation_ = (enforced(self._max_deviation(), best.check)
                               if bounds.categorical() else None)
        if not best.satisfied:
            warn(
                f"The rounded assignment leaves a violation of {best.violation:.3g} "
                f"(bounds as asked: {best.check.summary()}).", BoundNotMetWarning
            )
        self._fitted_with_sensitive = sensitive_features is not None
        return self

    def predict(self, X, *, sensitive_features=None):
        """Assign new rows to the fitted centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New rows.
        sensitive_features : array-like, Series or DataFrame, default=None
            Their sensitive attributes. Given, the rows are assigned with the
            fitted bounds measured against *their own* mix (one bounded
            assignment to ``cluster_centers_``; at least ``n_clusters`` rows).
            None: each row goes to its nearest centre (see Notes).

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster of each row.

        Warns
        -----
        UserWarning
            When the model was fitted with sensitive features and none are given.

        Notes
        -----
        Without ``sensitive_features`` the bounds are not applied to the new
        rows, so a model fitted with them warns.
        """
        check_is_fitted(self)
        index = row_index(X)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        with decided_threads():  # one thread count for the call's parallel kernels
            if sensitive_features is None:
                if self._fitted_with_sensitive:
                    warn(
                        "BoundedKMeans was fitted with sensitive features, but none were given: "
                        "each row goes to its nearest centre and the bounds are not applied. "
                        "Pass sensitive_features to assign the rows within the bounds.",
                        UserWarning
                    )
                return np.argmin(sq_distances(X, self.cluster_centers_), axis=1)
            bounds = resolve_bounds(
                sensitive_features, X.shape[0], max_deviation=self._max_deviation(),
                deviation_kind=self.deviation_kind,
                numeric_bound=self.numeric_bound, numeric_sensitive=self.numeric_sensitive,
                intersections=self.intersections, index=index, min_balance=self.min_balance)
            return solve(X, self.cluster_centers_, bounds, max_iter=1, tol=self.tol,
                         max_lp_variables=self.max_lp_variables).labels


@contextlib.contextmanager
def _progress_bar(show):
    """Show a tqdm bar moved by every bounded assignment (after 3 s, on a terminal only)."""
    if not show:
        yield
        return
    with tqdm(desc="BoundedKMeans", unit=" assignments", delay=3.0, leave=False,
              file=sys.stderr, disable=None) as bar:
        if bar.disable:
            yield
            return

        def step(progress):
            if progress.kind == "assignment":
                bar.update(1)
                bar.set_postfix_str(f"inertia {progress.objective:.6g}", refresh=False)

        with listening(step):
            yield
