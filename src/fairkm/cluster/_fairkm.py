"""The in-memory FairKM estimator: data checks, initialisation, restarts and engines.

The shared contract (parameters, fitted attributes, prediction) is in
:mod:`fairkm.cluster._base`, what the model does with new rows (predict, transform,
score) in :mod:`fairkm.cluster._prediction`, the engines in :mod:`fairkm.cluster._engine`, the
sweeps in :mod:`fairkm.cluster._kernels`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin
from sklearn.cluster import kmeans_plusplus
from sklearn.utils import check_random_state

from fairkm.bounds import constrain, decided_threads
from fairkm.exceptions import FairnessLossWarning
from fairkm.metrics import bounds_from_features, enforced
from fairkm.utils._call_site import warn
from fairkm.utils._inputs import feature_names, read_fit, warn_on_fit
from fairkm.utils._param_validation import (
    DEVIATION_KIND,
    SHARE_BOUND,
    StrOptions,
    at_least,
    check_n_samples,
    unit_interval,
)
from fairkm.utils._sensitive import check_sensitive_features

from . import _kernels
from ._base import BaseFairKM, FitOutcome
from ._docstrings import fill_estimator_docstring
from ._encoding import SensitiveEncoding
from ._engine import Session, fill_empty_clusters
from ._prediction import PredictionMixin
from ._walk import coarse_sample_size
from ._weighting import Problem

__all__ = ["FairKM"]

# With the scale-free weight, n_init="auto" starts k-means++ 10 times on up to this many rows
# (a start costs well under a second) and keeps the best S-blind clustering: the reference.
_MANY_STARTS_UP_TO = 100_000
# algorithm="auto" sweeps exactly up to this many rows, mini-batch above: the walk ran faster exact
# on 1,000,000 rows (bench_regimes.py); a paper's weight took 102 sweeps to 10 passes (bench_fit).
_EXACT_UP_TO = {"walk": 1_000_000, "absolute": 100_000}


@fill_estimator_docstring
class FairKM(ClassNamePrefixFeaturesOutMixin, PredictionMixin, BaseFairKM):
    """Fair K-Means over many sensitive attributes at once (FairKM).

    Minimises the K-Means objective on ``X`` plus a fairness penalty that
    pulls every cluster's mix of each sensitive attribute towards the
    dataset's mix (Abraham, Deepak P and Sundaram, EDBT 2020)::

        objective = sum_C sum_{x in C} ||x - mean_C||^2
                    + fairness_weight * sum_C (|C|/n)^e * sum_S w_S dev_S(C)

    with ``dev_S(C) = sum_s (Fr_C(s) - Fr_X(s))^2 / |Values(S)|`` for a
    categorical attribute (paper Eq. 7) and ``(mean_C(z) - mean_X(z))^2`` for
    a numeric one, ``z`` being the attribute standardised over the dataset
    (paper Eq. 21). The paper weighs each cluster by ``(|C|/n)^2`` (``e =
    2``); the default fit weighs every cluster alike (``e = 0``, see
    ``cluster_weighting``), so that each cluster's mix counts as a report
    shows it, cluster by cluster.

    Parameters
    ----------
    %(n_clusters)s
    %(weight_parameters)s
    %(max_cost)s
        Where the path leaps over the budget, the rows on which the two
        neighbouring clusterings differ are moved, cheapest first, as far as
        it allows.
    %(max_unfairness)s
    %(attribute_weights)s
    %(cluster_weighting)s
    %(numeric_sensitive)s
    %(intersections)s
    max_deviation : float, dict or None, default=None
        A worst-case guarantee on top of FairKM's averages: *every* cluster's
        share of every value of every categorical attribute within
        ``max_deviation`` of the dataset's, a share in [0, 1] (0.05 for 5%; a
        larger number is refused as a percentage). The bound constrains FairKM's
        clustering, it does not replace it: a clustering that meets it is
        kept unchanged; otherwise the fewest, cheapest rows are moved to meet
        it (see Notes). ``0`` asks for the dataset's exact mix, or, when whole
        rows cannot hold it, the tightest bound they meet (``max_deviation_``
        says which). A dict bounds the named attributes only. ``None``: no
        guarantee. Numeric attributes are not bounded (see
        :class:`fairkm.BoundedKMeans`'s ``numeric_bound``). With a budget
        (``max_cost``) the budget chooses FairKM's clustering and the bound, a
        guarantee, wins over it: a ``UserWarning`` says when the bounded
        clustering costs more than the budget allows.
    %(deviation_kind)s
    min_balance : float, dict or None, default=None
        A worst-case balance target on top of FairKM's averages: *every*
        cluster's smallest count of a value present in the dataset at least
        ``min_balance`` times its largest (Chierichetti et al., 2017), for
        every categorical attribute, or ``{name: target}`` for some; a
        one-sided floor in [0, 1]. Kept as ``max_deviation`` is (the
        clustering unchanged when it meets the target, else the fewest,
        cheapest rows moved), and combined with it when both are given.
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features), \
            default="k-means++"
        ``"k-means++"``: scikit-learn's k-means++ seeding on ``init_size``
        rows, then every point joins its nearest seed. ``"random"``: the
        paper's random assignment, a random permutation of equal-sized
        clusters. An array gives initial centres (points join the nearest).
        Empty initial clusters receive the point farthest from its centre.
    %(init_size)s
    n_init : "auto" or int, default="auto"
        Number of initialisations. With an absolute weight the run with the
        lowest objective is kept; with ``fairness_weight="auto"`` every start
        runs to its S-blind clustering, the one of lowest K-Means cost is the
        reference and only it goes on with the fairness term. ``"auto"``: 10
        for ``"random"``; for ``"k-means++"``, 10 with
        ``fairness_weight="auto"`` on up to 100,000 rows (a better S-blind
        reference makes the price of fairness honest), else 1; 1 for an array.
    max_iter : int, default=1000
        Maximum number of sweeps over the data per phase of a run (the S-blind
        phase, the fair phase, each trial of a budget's search). With a large
        absolute weight the objective can keep falling slowly for hundreds of
        sweeps.
    tol : float, default=1e-4
        A phase stops when a sweep lowers the objective by no more than
        ``tol`` times its value. ``0`` runs to a local optimum for
        single-point moves (a sweep that moves no point).
    algorithm : {"auto", "exact", "minibatch"}, default="auto"
        The engine. ``"exact"``: the paper's sweeps, one point at a time in
        data order, each move priced against statistics that include every
        earlier move. ``"minibatch"``: each epoch visits the points in a
        random order (of blocks of 256 consecutive rows), ``batch_size`` at a
        time; a batch's points choose their moves in parallel against the
        same statistics, and the moves are kept only if the objective,
        recomputed exactly, fell (the batch is halved and retried otherwise);
        when batches overshoot, and once an epoch meets the ``tol`` rule,
        exact sweeps finish the phase. ``"auto"``: ``"exact"`` on up to
        1,000,000 rows with the scale-free weight and up to 100,000 at an
        absolute one, ``"minibatch"`` above (``docs/scale.md``). The
        objective never rises with either engine, and the labels do not
        depend on the number of threads.
    batch_size : int, default=16384
        Largest batch of the ``"minibatch"`` engine (ignored by ``"exact"``).
        Larger batches use more threads at a time but overshoot more often
        when the fairness weight is large.
    coarse_walk : bool, default=True
        On 400,000 rows or more (of positive weight, up to 50 clusters), with
        a ``relative_weight`` up to 1 (the default) or a budget, work on a
        seeded sample of 100,000 rows first: the S-blind phase starts from
        the sample's S-blind clustering, and a ``relative_weight``'s ladder of
        weights is climbed on the sample before every row is minimised at the
        weight it kept (``docs/fairness-weight.md``). 2 to 2.5 times as fast
        at the default weight on the three sets measured; the clustering is
        another local optimum than the walk on every row's, of about the same
        objective, whose attributes' mixes can differ by a few percent
        (``docs/scale.md``). Larger weights walk every row whatever this is.
        ``False`` walks every row (the clustering of fairkm before this
        option).
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisations (and the ``"minibatch"`` visiting orders).
        The same value gives identical labels.
    %(verbose)s

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training point.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Mean of each cluster.
    inertia_ : float
        K-Means term: sum of squared distances to the cluster means.
    %(fitted_objective)s
    objective_history_ : ndarray of shape (n_iter_ + 1,)
        Objective after initialisation and after each sweep (or epoch) of the
        kept run, each under the weights of its phase: with
        ``fairness_weight="auto"`` the S-blind phase minimises the K-Means
        term alone, so the history rises where the fair phase begins.
    n_iter_ : int
        Number of sweeps (and epochs) of the kept run, every phase included;
        a phase skipped because no single move could pay in it (a "quiet
        phase", ``docs/scale.md``) made none. Passes over every row: the
        sweeps of the sample a fit on many rows works on first
        (``coarse_walk``) are not counted (``verbose`` prints them as
        "sample sweep").
    n_threads_ : int
        The threads every parallel kernel of the fit ran on, decided once at
        its start: at most numba's threads and the CPUs the process may use
        (``joblib.cpu_count()``, the affinity mask), or the environment
        variable ``FAIRKM_NUM_THREADS``; a mini-batch fit also leaves out the
        cores other work kept busy. ``predict`` and ``score`` decide their
        own, once per call.
    %(fitted_weights)s
    %(fitted_fairness)s
    %(fitted_features)s
    bounds_check_ : fairkm.metrics.BoundsCheck or None
        With ``max_deviation``: the bounds measured on ``labels_``
        (``satisfied``, ``violation``, per attribute the largest deviation and
        its cluster, ``summary()``); None without.
    violation_ : float
        With ``max_deviation``: the largest violation of the bounds left after
        rounding, 0 when every cluster meets them (NaN without).
    max_deviation_ : float, dict or None
        The bound enforced: ``max_deviation``, except that an attribute asked
        at 0 holds the tightest bound whole rows meet (0 when they can hold
        the exact mix; ``bounds_check_.note`` says which).
    n_moved_by_bound_ : int
        With ``max_deviation``: rows whose cluster the bound changed (0 when
        FairKM's clustering already met it; 0 without).
    bound_repair_ : BoundRepair or None
        With ``max_deviation``: what keeping FairKM's clustering within the
        bound did (None without). ``how``: ``"met"`` (kept unchanged),
        ``"repaired"``, ``"relaxed"`` or ``"searched"`` (rows moved with no
        loss, see Notes) or ``"least loss"`` (no clustering found meets the
        bound without a loss; the one of least loss is kept and a
        :class:`fairkm.exceptions.FairnessLossWarning` names its losses);
        ``n_moved``; ``before`` and ``after``: per (attribute, distance) the
        mean over the clusters (each counting once) and the worst cluster of
        the distance from the dataset's mix, in FairKM's clustering and in the
        bounded one, ``table()`` the same as a DataFrame; ``loss``: each
        attribute, distance and statistic that ended higher (empty when none).
        The distances are those the reports measure: ``"euclidean"`` (AE, ME;
        for a numeric attribute the gap of its standardised mean, as in
        ``cluster_deviation_``) and ``"wasserstein"`` (AW, CW, MW and the
        audit; for a categorical attribute the total variation, as in
        ``cluster_deviation_``).

    See Also
    --------
    sklearn.cluster.KMeans : Fairness-blind K-Means (Lloyd's algorithm).
    fairkm.BoundedKMeans : The cheapest clustering under a bound.

    Notes
    -----
    The scale-free weight (``fairness_weight="auto"``): with ``I0`` the
    K-Means term of the S-blind clustering, ``T_S`` attribute ``S``'s
    fairness term and ``R_S`` its value under full segregation per unit of
    cluster weight (``(1 - sum_s p_s^2) / |Values(S)|``, 1 for a numeric
    attribute), a phase at weight ``w`` minimises ``inertia / I0 + (w / 2)
    U / U0`` with ``U = sum_S u_S T_S / R_S``, ``u_S`` being
    ``attribute_weights`` and ``U0`` the S-blind clustering's ``U``. The fair
    phase climbs a fixed ladder of weights ``w`` (1/8, doublings to 4096,
    three bisections at the end), each phase from the clustering of the last
    one kept, and keeps a phase while ``w (1 + c) <= relative_weight``, ``c``
    being its cost increase: where the frontier turns steep, a doubling of
    the weight buys a part of it, not all of it. Budgets walk the same
    ladder. ``U0`` is floored where unfairness means little, so attributes as
    fair as chance cost nothing to keep. An attribute whose mean or worst
    cluster ends further from the dataset's mix than in the S-blind
    clustering (by over 1%) gets its weight raised 4-fold and the fair phase
    runs again, three times at most; a ``UserWarning`` names any that still
    does. ``docs/fairness-weight.md`` has the whole rule and what it cost on
    real data.

    With ``max_deviation``, a clustering that breaks the bound is repaired by
    a local search from FairKM's labels (moves and swaps that bring the
    clusters within the bound at the least K-Means cost per unit of excess
    removed) under guards: no attribute's mean over the clusters or worst
    cluster may end further from the dataset's mix than FairKM left it, by
    either distance the reports measure (Euclidean and Wasserstein, see
    ``bound_repair_``). Where that leaves a loss, the search starts again from
    the linear relaxation under FairKM's own bands, then with finer guards
    (a numeric attribute's distribution function at its quantiles, then every
    cluster's every share capped at its own distance) from FairKM's labels,
    the relaxation's and the cheapest assignment under the bound
    (:func:`fairkm.bounds.fair_assignment`); the cheapest clustering meeting
    the bound with no loss is kept. Where none is found, the one of least
    loss is kept and :class:`fairkm.exceptions.FairnessLossWarning` names each
    attribute, distance and amount that got worse. The fitted attributes are
    those of the bounded clustering, but for
    ``objective_history_`` and ``n_iter_``. Bounds that no assignment of whole
    rows can meet raise :class:`fairkm.exceptions.InfeasibleBoundError`; a
    violation the rounding leaves is in ``violation_`` and warned about
    (:class:`fairkm.exceptions.BoundNotMetWarning`). :meth:`predict` does not
    bound new rows (``docs/bounds.md``).

    Moves are priced exactly from per-cluster sums, counts, value counts and
    numeric sums: the K-Means change includes the shift of both centres and
    the fairness change of an attribute costs O(1) per cluster whatever its
    number of values. A sweep costs O(n k (d + n_attributes)); statistics are
    recomputed exactly from the labels after each sweep (and epoch).

    Examples
    --------
    >>> import numpy as np
    >>> from fairkm import FairKM
    >>> X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2]])
    >>> group = np.array(["a", "a", "b", "b", "b", "a"])
    >>> model = FairKM(n_clusters=2, random_state=0).fit(X, sensitive_features=group)
    >>> np.bincount(model.labels_).tolist()
    [3, 3]
    """

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
        max_deviation=None,
        deviation_kind="additive",
        min_balance=None,
        init="k-means++",
        init_size=None,
        n_init="auto",
        max_iter=1000,
        tol=1e-4,
        algorithm="auto",
        batch_size=16384,
        coarse_walk=True,
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            n_clusters, fairness_weight=fairness_weight, relative_weight=relative_weight,
            max_cost=max_cost, max_unfairness=max_unfairness,
            attribute_weights=attribute_weights, cluster_weighting=cluster_weighting,
            numeric_sensitive=numeric_sensitive, intersections=intersections, init=init,
            init_size=init_size, max_iter=max_iter, tol=tol, random_state=random_state,
            verbose=verbose,
        )
        self.max_deviation = max_deviation
        self.deviation_kind = deviation_kind
        self.min_balance = min_balance
        self.n_init = n_init
        self.algorithm = algorithm
        self.batch_size = batch_size
        self.coarse_walk = coarse_walk

    _parameter_constraints = {
        **BaseFairKM._parameter_constraints,
        "max_deviation": [None, *SHARE_BOUND],
        "deviation_kind": DEVIATION_KIND,
        "min_balance": [None, unit_interval(high_closed=True), dict],
        "n_init": [StrOptions({"auto"}), at_least(1)],
        "algorithm": [StrOptions({"auto", "exact", "minibatch"})],
        "batch_size": [at_least(1)],
        "coarse_walk": ["boolean"],
    }

    # ------------------------------------------------------------------ validation

    def _check_params_vs_input(self, n_samples, n_features, names, *, features=None,
                               sample_weight=None):
        """Check the parameters against the data; return the :class:`FitParameters`.

        Beyond the shared checks: the number of starts, and the bounds
        (``max_deviation``) built on the sensitive ``features`` fit has read.
        """
        checked = super()._check_params_vs_input(n_samples, n_features, names)
        if isinstance(self.n_init, str):  # "auto"
            n_init = 1
            if isinstance(self.init, str) and (
                self.init == "random"
                or (checked.policy.walks and n_samples <= _MANY_STARTS_UP_TO)
            ):
                n_init = 10
        else:
            n_init = self.n_init
        return replace(checked, n_init=n_init,
                       bounds=self._check_bounds(features, sample_weight))

    # ------------------------------------------------------------------ fitting

    def _initial_labels(self, X, seed, init_centers, weights):
        n, k = X.shape[0], self.n_clusters
        if init_centers is None and self.init == "random":
            rng = np.random.RandomState(seed)
            labels = rng.permutation(np.arange(n, dtype=np.int64) % k)
            if weights is not None:
                # Clusters of weight 0 (only rows of weight 0) are empty.
                centers = np.stack([X[labels == c].mean(axis=0) for c in range(k)])
                fill_empty_clusters(X, labels, centers, weights)
            return labels
        if init_centers is None:
            rows = self._seeding_rows(n, seed)
            sample = slice(None) if rows is None else rows
            centers, _ = kmeans_plusplus(
                X[sample], k, random_state=seed,
                sample_weight=None if weights is None else weights[sample],
            )
        else:
            centers = init_centers
        labels = np.empty(n, dtype=np.int64)
        _kernels.nearest_center(X, np.ascontiguousarray(centers), labels)
        fill_empty_clusters(X, labels, centers, weights)
        return labels

    def fit(self, X, y=None, *, sensitive_features=None, sample_weight=None):
        """Compute a fair clustering.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Non-sensitive features (numeric).
        y : Ignored
            Not used, present for API consistency.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
                pandas Series or DataFrame, default=None
            One column per sensitive attribute, categorical or numeric (see
            ``numeric_sensitive``). ``None`` fits plain K-Means.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row (survey weights, say): a row of
            weight ``w`` counts as ``w`` rows in the K-Means term, the centres,
            the dataset's and the clusters' mixes and sizes. ``None``: all 1.
            Rows of weight 0 take no part in the fit and are labelled with
            their nearest centre.

        Returns
        -------
        self : FairKM
            Fitted estimator.
        """
        self._validate_params()
        inputs = read_fit(self, X, y, sensitive_features, sample_weight, self._check_X)
        X, sensitive_features = inputs.X, inputs.sensitive_features
        n_samples = X.shape[0]
        # The fit runs on weights scaled by a power of two (exact), reported in the user's.
        user_weight, unit, sample_weight = inputs.sample_weight, inputs.unit, inputs.scaled_weight
        # What audit() reads to warn when this fit is audited without its weights.
        self._weighted_fit = user_weight is not None and bool(np.ptp(user_weight) > 0)
        features = None
        if sensitive_features is not None:
            features = check_sensitive_features(
                self._with_intersections(sensitive_features), n_samples=n_samples,
                numeric=self.numeric_sensitive,
            )
        checked = self._check_params_vs_input(
            n_samples, X.shape[1], [] if features is None else features.names,
            features=features, sample_weight=user_weight,
        )
        # Rows of weight 0 take no part: a cluster of them alone would be empty.
        n_rows = inputs.n_positive
        check_n_samples(n_rows, self.n_clusters, " (of positive weight)")
        cluster_exponent = checked.cluster_exponent
        total = n_samples if sample_weight is None else float(sample_weight.sum())
        policy = checked.policy.in_weight_unit(unit, total)
        encoding = SensitiveEncoding.from_features(features, total, sample_weight)
        # Once the attributes are known to standardise.
        warn_on_fit(X, feature_names(self, X.shape[1]), features,
                    kinds_by_dtype=isinstance(self.numeric_sensitive, str))
        terms = encoding.terms(features, checked.attribute_weights, n_rows=n_samples,
                               sample_weight=sample_weight, cluster_exponent=cluster_exponent)
        # The terms hold the codes the fit reads; the columns' own codes (8 bytes a row and
        # attribute) would otherwise stay allocated through every sweep of the fit.
        del features

        algorithm = self.algorithm
        if algorithm == "auto":
            limit = _EXACT_UP_TO["walk" if policy.walks else "absolute"]
            algorithm = "minibatch" if n_samples > limit else "exact"
        rng = check_random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=checked.n_init)
        sample_size = (coarse_sample_size(n_rows, self.n_clusters)
                       if policy.samples and self.coarse_walk else 0)
        sample = None
        if sample_size:
            # Drawn after the starts' seeds, which are then those of a fit on fewer rows.
            sample = _RowSample(
                _sample_rows(sample_weight, n_samples, sample_size,
                             rng.randint(np.iinfo(np.int32).max)))

        def starts():
            for seed in seeds:
                def start(lam, seed=seed):
                    return Session(
                        X, terms, lam,
                        self._initial_labels(X, seed, checked.init_centers, sample_weight),
                        n_clusters=self.n_clusters, verbose=self.verbose,
                        algorithm=algorithm, batch_size=self.batch_size,
                        rng=np.random.RandomState(seed),
                    )
                yield start

        # One thread count for every parallel kernel of the fit (seeding's labels, mini-batch
        # proposals, the bound's passes); idle cores are watched only before mini-batch
        # epochs, whose many parallel regions each wait for a descheduled thread.
        with decided_threads(watch_idle=algorithm == "minibatch") as n_threads:
            fitted = policy.fit(starts(), Problem(encoding, checked.attribute_weights,
                                                  cluster_exponent, n_rows, self.max_iter,
                                                  self.tol, sample))
            session, weighting = fitted.session, fitted.weighting
            bounded = None
            if checked.bounds is not None:
                bounded = constrain(X, session.labels, session.stats.cluster_centers(),
                                    checked.bounds, verbose=self.verbose)
                session.labels[:] = bounded.labels
                self._warn_of_losses(bounded.repair)
                session.inertia, session.fairness, session.objective = session.evaluate()
                self._warn_if_the_bound_broke_the_budget(policy, session.inertia,
                                                         weighting.blind_inertia)
            labels = session.labels
            if sample_weight is not None and np.any(sample_weight == 0):
                # Rows of weight 0 changed nothing; they go to their nearest centre.
                zero = np.flatnonzero(sample_weight == 0)
                nearest = np.empty(zero.size, dtype=np.int64)
                _kernels.nearest_center(np.ascontiguousarray(X[zero]),
                                        session.stats.cluster_centers(), nearest)
                labels[zero] = nearest
        self._set_fitted(FitOutcome(
            labels=labels, stats=session.stats, terms=session.terms, inertia=session.inertia,
            fairness=session.fairness, history=np.array(session.history),
            n_iter=session.n_iter, converged=fitted.converged, unit="sweeps", weighting=weighting,
            encoding=encoding, cluster_exponent=cluster_exponent, weight_unit=unit,
            threads=n_threads,
            row_weight=1.0 if user_weight is None else total / n_rows * unit,
        ))
        self._set_bounded(bounded)
        return self

    def _set_bounded(self, bounded):
        """Set the fitted attributes of the bound (``bounded``: a Constrained, or None)."""
        self.bounds_check_ = None if bounded is None else bounded.check
        self.violation_ = np.nan if bounded is None else bounded.check.violation
        self.n_moved_by_bound_ = 0 if bounded is None else bounded.n_moved
        self.bound_repair_ = None if bounded is None else bounded.repair
        self.max_deviation_ = (None if bounded is None
                               else enforced(self.max_deviation, bounded.check))

    def _warn_of_losses(self, repair):
        """Warn, naming each, when the bound left an attribute further from the mix."""
        if repair.loss:
            asked = " and ".join(f"{name}={value!r}" for name, value in (
                ("max_deviation", self.max_deviation), ("min_balance", self.min_balance))
                if value is not None)
            warn(f"{asked} could not be met without leaving "
                 f"{', '.join(repair.attributes_worse)} further from the dataset's mix than "
                 f"FairKM's own clustering: {'; '.join(map(str, repair.loss))}. The clustering "
                 "of least loss is kept (bound_repair_ has the table).", FairnessLossWarning)

    def _warn_if_the_bound_broke_the_budget(self, policy, inertia, blind_inertia):
        """Warn when the bound, a guarantee that wins over ``max_cost``, broke the budget."""
        if policy.cost_limit is None or inertia <= policy.cost_limit * blind_inertia:
            return
        warn(
            f"max_deviation={self.max_deviation!r} broke the budget max_cost={self.max_cost:g}: "
            f"the bounded clustering costs {inertia / blind_inertia - 1:+.1%} against the "
            "S-blind clustering (the budget chose FairKM's centres, and the bound, a "
            "guarantee, wins over it). Loosen max_deviation, or allow a larger max_cost."
        )

    def _check_bounds(self, features, sample_weight):
        """Return the bounds ``max_deviation`` and ``min_balance`` ask for (or None).

        ``features`` are the sensitive features fit has read (None without):
        the bounds are built on them, not read again.
        """
        if self.max_deviation is None and self.min_balance is None:
            return None
        if features is None:
            asked = (f"max_deviation={self.max_deviation!r}" if self.min_balance is None
                     else f"min_balance={self.min_balance!r}")
            raise ValueError(
                f"{asked} bounds the clusters' mix of the "
                "sensitive attributes, but fit got no sensitive_features."
            )
        return bounds_from_features(features, sample_weight, max_deviation=self.max_deviation,
                                    deviation_kind=self.deviation_kind, categorical_needed=True,
                                    min_balance=self.min_balance)


@dataclass(frozen=True)
class _RowSample:
    """The rows a fit on many rows works on first (``fairkm.cluster._walk``)."""

    rows: np.ndarray

    def __call__(self, session):
        """Return a session over the rows from ``session``'s labels, and their number (or None)."""
        sampled = session.sample(self.rows)
        return None if sampled is None else (sampled, self.rows.size)


def _sample_rows(sample_weight, n_samples, size, seed):
    """Draw ``size`` rows of positive weight, without replacement, in data order."""
    rows = (np.arange(n_samples) if sample_weight is None
            else np.flatnonzero(sample_weight > 0))
    return np.sort(np.random.default_rng(seed).choice(rows, size, replace=False))
