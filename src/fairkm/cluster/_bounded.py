"""BoundedKMeans: K-Means whose every cluster keeps the dataset's mix within stated bounds."""

from __future__ import annotations

import contextlib
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm import tqdm

from fairkm.bounds import (
    SOLVER_CONSTRAINTS,
    as_fair_as_whole_rows,
    decided_threads,
    losses,
    solve,
    sq_distances,
    standing_of,
)
from fairkm.exceptions import BoundNotMetWarning, InfeasibleBoundError
from fairkm.metrics import (
    bounds_from_features,
    enforced,
    from_codes,
    no_bounds,
)
from fairkm.utils._call_site import warn
from fairkm.utils._inputs import (
    feature_names,
    paired,
    read_fit,
    row_index,
    warn_if_duplicate_centers,
    warn_on_fit,
)
from fairkm.utils._options import MULTIPLICATIVE
from fairkm.utils._param_validation import (
    BOUND,
    DEVIATION_KIND,
    INTERSECTIONS,
    N_CLUSTERS,
    NUMERIC_SENSITIVE,
    SHARE_BOUND,
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

# The starts of n_init="auto", by init. FairKM's centres are near the bounds, but one FairKM
# seed can end in a dearer valley (0.8% on FCA's Adult setting); K-Means' centres find the
# cheap clusterings that FairKM's fairness term steers away from (exact balance of colours tied
# to blobs). Each start costs about one FairKM or K-Means fit and one alternation.
_AUTO_STARTS = {"fairkm": ("fairkm", "fairkm", "k-means++", "k-means++"),
                "k-means++": ("k-means++",) * 3}


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
    them. From FairKM's and K-Means' centres (the default; or either, or
    given centres) it makes the bounded assignment at the least
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
        (the others are reported, not bounded), or None; a share in [0, 1]
        (0.05 for 5%: a larger number is refused as a percentage). 0 asks for the
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
        cheap), those of scikit-learn's K-Means from one k-means++ seeding
        (``KMeans(n_init=1)``: where the bounds cost little, they find
        cheaper clusterings than FairKM's fairness term leads to), or given
        centres (``KMeans(...).cluster_centers_``, say). With ``n_init="auto"``,
        "fairkm" starts from both kinds.
    n_init : "auto" or int, default="auto"
        Number of starts, each from its own seed and alternated to the end;
        the clustering with the smallest violation, then the lowest cost, is
        kept. An int makes that many starts of the kind ``init`` names; it
        must be 1 with given centres. "auto": with "fairkm", two starts from
        FairKM's centres, then two from K-Means' (the first is the start of
        ``n_init=1``, so "auto" never ends dearer than it); three with
        "k-means++"; one with given centres. Each start costs about one
        FairKM or K-Means fit and one alternation.
    max_iter : int, default=20
        Number of bounded assignments per start at most.
    tol : float, default=1e-4
        Stop when an assignment lowers the K-Means cost by no more than
        ``tol`` times its value.
    max_lp_variables : int, default=100_000
        Largest linear programme solved at once, in (row, cluster) pairs;
        beyond it, the rows are priced by the programme's duals and only
        those near a tie solved one by one (see :func:`fair_assignment`).
    random_state : int, RandomState instance or None, default=None
        Seeds the starts (FairKM, K-Means). The same value gives identical labels.
    progress : bool, default=True
        Show a progress bar (tqdm) on standard error, from the fit's start,
        when standard error is a terminal: one step per start, with the
        current start's centres, bounded assignments and cost beside it.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training row.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The clusters' (weighted) means.
    inertia_ : float
        K-Means cost of ``labels_`` (sum of weighted squared distances).
    n_iter_ : int
        Number of bounded assignments of the kept start.
    n_threads_ : int
        The threads the fit's parallel kernels ran on (the assignments'
        pricing passes), decided once at its start: at most numba's threads
        and the CPUs the process may use, or ``FAIRKM_NUM_THREADS``.
        ``predict`` decides its own, once per call.
    cost_history_ : tuple of float
        ``inertia_`` after each assignment of the kept start.
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
    >>> from fairkm import BoundedKMeans
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
        "max_deviation": [StrOptions({"auto"}), None, *SHARE_BOUND],
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
                 max_lp_variables=100_000, random_state=None, progress=True):
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

    def _starts(self, given):
        """Return the kind of each start: "fairkm", "k-means++" or "given"."""
        if given is not None:
            return ("given",)
        if isinstance(self.n_init, str):
            return _AUTO_STARTS[self.init]
        return (self.init,) * self.n_init

    def _start(self, kind, X, seed, given, bounds, sensitive_features):
        """Return the starting centres of one start (fitted with the bounds' weights)."""
        if kind == "given":
            return given
        with warnings.catch_warnings():
            # The words of FairKM and KMeans are about their own clusterings, not the bounded
            # one; those about the data (and duplicate centres) this fit says once itself.
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", ConvergenceWarning)
            if kind == "k-means++":
                return KMeans(self.n_clusters, n_init=1, random_state=seed).fit(
                    X, sample_weight=bounds.weights).cluster_centers_
            from . import FairKM

            model = FairKM(self.n_clusters, numeric_sensitive=self.numeric_sensitive,
                           intersections=self.intersections, random_state=seed)
            model.fit(X, sensitive_features=sensitive_features, sample_weight=bounds.weights)
        return model.cluster_centers_

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
        """Return the bounds asked for on the features read (none without), with the weights.

        A bound given must bound some attribute: ``numeric_bound`` a numeric
        one, ``max_deviation`` a categorical one unless ``numeric_bound``
        bounds something.
        """
        if features is None:
            return no_bounds(weights, deviation_kind)
        bounds = bounds_from_features(features, weights, max_deviation=self._max_deviation(),
                                      deviation_kind=deviation_kind,
                                      numeric_bound=self.numeric_bound,
                                      min_balance=self.min_balance)
        kinds = {"numeric_bound": ("numeric", bounds.numeric(bounded_only=False),
                                   bounds.numeric()),
                 "max_deviation": ("categorical", bounds.categorical(bounded_only=False),
                                   bounds.categorical() or bounds.numeric())}
        for name, (kind, eligible, bounded) in kinds.items():
            value = self._max_deviation() if name == "max_deviation" else self.numeric_bound
            if value is not None and not bounded:
                have = (f"the {kind} ones are {[a.name for a in eligible]}" if eligible
                        else f"there is no {kind} one among {list(features.names)}")
                raise ValueError(
                    f"{name}={getattr(self, name)!r} bounds no sensitive attribute: {have}."
                    + (" Bound numeric ones with numeric_bound." if kind == "categorical"
                       and bounds.numeric(bounded_only=False) else ""))
        return bounds

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
        kinds = self._starts(given)
        seeds = rng.randint(np.iinfo(np.int32).max, size=len(kinds))
        best = None
        # One thread count for every parallel kernel of the fit (the assignments' passes).
        with _progress_bar(self.progress, len(kinds)) as begin, \
                decided_threads() as n_threads:
            for kind, seed in zip(kinds, seeds, strict=True):
                begin(kind)
                centers = self._start(kind, X, int(seed), given, bounds, sensitive_features)
                if bounds.exact:
                    # max_deviation=0 resolved once, at the first start's centres: every
                    # start then meets the same bound, so their costs compare (and the
                    # floor's search is paid once).
                    bounds = as_fair_as_whole_rows(X, centers, bounds,
                                                   max_lp_variables=self.max_lp_variables)
                result = solve(X, centers, bounds, max_iter=self.max_iter, tol=self.tol,
                               max_lp_variables=self.max_lp_variables, warn=False)
                key = (round(result.violation, 9), result.inertia)
                if best is None or key < (round(best.violation, 9), best.inertia):
                    best = result
            begin(None)
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
        # What audit() reads to warn when this fit is audited without its weights.
        self._weighted_fit = sample_weight is not None and bool(np.ptp(sample_weight) > 0)
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
            assignment to ``cluster_centers_``; at least ``n_clusters`` rows),
            unless that leaves them further from their mix than each row's
            nearest centre (see Notes). None: each row goes to its nearest
            centre.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster of each row.

        Warns
        -----
        UserWarning
            When the model was fitted with sensitive features and none are
            given, when the bounded assignment is set aside, or when no
            assignment of the new rows can meet the bounds.

        Notes
        -----
        Without ``sensitive_features`` the bounds are not applied to the new
        rows, so a model fitted with them warns. With them, the bounded
        assignment is kept only if it leaves no attribute further from the new
        rows' mix than nearest-centre assignment does, by the distances
        :func:`fairkm.metrics.fairness_report` measures: the mean over clusters
        and the worst cluster of the Euclidean distance (of the shares; for a
        numeric attribute, the gap between means) and of the Wasserstein
        distance (total variation for a categorical attribute), as a bounded
        :class:`fairkm.FairKM` judges its repair. Otherwise the assignment is
        made again with every bound lowered to what nearest centres reach;
        where that fails too (an attribute without a bound, or a bound that
        leaves a mean over clusters above nearest's), the rows go to their
        nearest centre, with a warning naming each attribute and distance. So
        do they, with a warning saying why, when no assignment of the new rows
        can meet the bounds (a value with fewer rows than there are clusters,
        for instance).
        """
        check_is_fitted(self)
        index = row_index(X)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        with decided_threads():  # one thread count for the call's parallel kernels
            nearest = np.argmin(sq_distances(X, self.cluster_centers_), axis=1)
            if sensitive_features is None:
                if self._fitted_with_sensitive:
                    warn(
                        "BoundedKMeans was fitted with sensitive features, but none were given: "
                        "each row goes to its nearest centre and the bounds are not applied. "
                        "Pass sensitive_features to assign the rows within the bounds.",
                        UserWarning
                    )
                return nearest
            features = self._features(
                paired(sensitive_features, index, name="sensitive_features"), X.shape[0])
            bounds = self._bounds(features, None, self.deviation_kind)
            try:
                labels = solve(X, self.cluster_centers_, bounds, max_iter=1, tol=self.tol,
                               max_lp_variables=self.max_lp_variables).labels
            except InfeasibleBoundError as exc:
                warn(f"No assignment of these {X.shape[0]} rows meets the model's bounds "
                     f"({exc}): the rows go to their nearest centre.", UserWarning)
                return nearest
            worse = _further_from_mix(labels, nearest, features)
            if worse:
                # Spent on cost, the room inside the bounds can leave an attribute further
                # from the mix than nearest centres did: again, no attribute's deviation
                # above theirs.
                tight = _no_looser_than(bounds, features, nearest, self.n_clusters,
                                        self.min_balance)
                try:
                    result = solve(X, self.cluster_centers_, tight, max_iter=1, tol=self.tol,
                                   max_lp_variables=self.max_lp_variables, warn=False)
                except InfeasibleBoundError:
                    result = None
                if result is not None and result.satisfied and not _further_from_mix(
                        result.labels, nearest, features):
                    return result.labels
        if worse:
            warn(
                "The bounded assignment of the new rows leaves "
                f"{' and '.join(dict.fromkeys(item.attribute for item in worse))} further "
                "from their mix than each row's nearest centre does (nearest centres -> bounded: "
                f"{'; '.join(map(str, worse))}): the rows go to their nearest centre.",
                UserWarning
            )
            return nearest
        return labels


def _no_looser_than(bounds, features, labels, n_clusters, min_balance):
    """Return ``bounds`` with each attribute's bound lowered to the deviation ``labels`` reach."""
    reached = from_codes(bounds, labels, n_clusters).table["deviation"]

    def lowered(attributes, most):
        out = {}
        for a in attributes:
            bound = min(a.delta if a.bounded and not np.isnan(a.delta) else np.inf,
                        float(reached[a.name]))
            if bound < most:
                out[a.name] = bound
        return out or None

    most = 1.0 if bounds.kind == MULTIPLICATIVE else np.inf
    return bounds_from_features(
        features, None, max_deviation=lowered(bounds.categorical(bounded_only=False), most),
        deviation_kind=bounds.kind,
        numeric_bound=lowered(bounds.numeric(bounded_only=False), np.inf),
        min_balance=min_balance)


def _further_from_mix(labels, reference, features):
    """Return what ``labels`` leave further from the mix than ``reference`` (empty: nothing).

    By the distances the reports measure (:mod:`fairkm.bounds._loss`), as a
    bounded FairKM judges its repair and its prediction.
    """
    return losses(standing_of(reference, features), standing_of(labels, features))


_START_NAMES = {"fairkm": "FairKM's centres", "k-means++": "K-Means' centres",
                "given": "the given centres"}


@contextlib.contextmanager
def _progress_bar(show, n_starts):
    """Yield ``begin(kind)``, called as each start begins (None: the last one ended).

    Shown (on a terminal only) from the fit's start: one step per start, the
    current start's centres and its bounded assignments beside it.
    """
    if not show:
        yield lambda kind: None
        return
    with tqdm(desc="BoundedKMeans", total=n_starts, unit=" starts", leave=False,
              file=sys.stderr, disable=None) as bar:
        if bar.disable:
            yield lambda kind: None
            return
        state = {"begun": 0, "name": ""}

        def begin(kind):
            if state["begun"]:
                bar.update(1)
            if kind is not None:
                state["begun"] += 1
                state["name"] = _START_NAMES[kind]
                bar.set_postfix_str(f"start {state['begun']}: {state['name']}")

        def step(progress):
            if progress.kind == "assignment":
                bar.set_postfix_str(f"start {state['begun']}: {state['name']}, assignment "
                                    f"{progress.iteration}, inertia {progress.objective:.6g}")

        with listening(step):
            yield begin
