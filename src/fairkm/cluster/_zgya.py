"""ZGYA: Variational Fair Clustering (Ziko, Granger, Yuan and Ben Ayed), K-Means variant.

The estimator: parameters, validation, the outer loop of the authors'
released code (restarts, reseeding, stopping) and the fitted attributes. The
array work of each step is in :mod:`._zgya_kernels`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from fairkm.bounds import decided_threads
from fairkm.utils import _sums
from fairkm.utils._call_site import warn
from fairkm.utils._inputs import feature_names, read_fit, warn_if_duplicate_centers, warn_on_fit
from fairkm.utils._param_validation import (
    FAMILY_CONSTRAINTS,
    TOL,
    Interval,
    StrOptions,
    at_least,
    check_init_centers,
    check_n_samples,
)
from fairkm.utils._sensitive import NUMERIC, check_sensitive_features

from ._docstrings import fill_estimator_docstring
from ._mixin import NearestCenterMixin, SensitiveFeaturesMixin
from ._zgya_kernels import (
    KL_FLOOR,
    bound_factors,
    center_distances,
    distinct_rows,
    fairness_cost,
    group_masses,
    one_hot,
    optimise_bound,
    segments,
    softmax_columns,
    weighted_means,
    weighted_sum,
)

__all__ = ["ZGYA"]

# Reseeds per run before the authors' "trivial solution" exit (their
# restore_nonempty_cluster: ts_limit = 2, so the fourth emptying stops the run).
# The advice on a feature named like a row weight: ZGYA takes no sample_weight.
_NO_WEIGHTS = ("leave it out of X (ZGYA takes no sample_weight; FairKM and BoundedKMeans "
               "take it as sample_weight)")
_MAX_RESEEDS = 3

# K-Means starts of a reseed: scikit-learn's KMeans default when the authors'
# code was written (it calls KMeans(n_clusters=K).fit(X)).
_RESEED_N_INIT = 10


@fill_estimator_docstring
class ZGYA(NearestCenterMixin, SensitiveFeaturesMixin, BaseEstimator):
    """Variational Fair Clustering, K-Means variant (ZGYA).

    Ziko, Granger, Yuan and Ben Ayed's fair clustering ("Variational Fair
    Clustering", AAAI 2021; arXiv:1906.08207, 2019): the bound updates of the
    paper inside the outer loop of the authors' released code
    (imtiazziko/Variational-Fair-Clustering). Soft assignments ``S`` (rows on
    the simplex) minimise::

        E(S) = sum_{p,k} s_pk ||x_p - c_k||^2 + fairness_weight * sum_k KL(U || P_k)

    where ``P_k = [P(j|k)]_j``, ``P(j|k) = V_j^T S_k / 1^T S_k`` is the mix of
    the sensitive attribute's values in cluster ``k`` and ``U`` the target
    mix (the dataset's by default). It supports one categorical sensitive
    attribute with any number of values; the FairKM paper runs it once per
    attribute.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters.
    fairness_weight : float, default=15.0
        Weight ``lambda`` of the KL fairness term, >= 0. The default is the
        value of the FairKM paper's ZGYA runs (authors' 2019 code). Because the
        K-Means term grows with ``n_samples`` and the KL term does not, useful
        values grow with the data: Ziko et al. report 10 on their synthetic
        data and thousands on Adult and Bank (see Notes). ``0`` gives Lloyd's
        K-Means.
    lipschitz : float, default=2.0
        Lipschitz constant ``L`` of the bound (> 0): each bound update moves
        ``S`` by ``exp(-(a + lambda b) / L)``. The default is that of the
        authors' released code. Larger values take smaller, safer steps; when
        ``fairness_weight / lipschitz`` is large the updates can overshoot and
        oscillate (the bound then no longer majorises the objective).
    target_proportions : array-like of shape (n_values,) or None, default=None
        Target mix ``U`` of the sensitive attribute's values, in the order of
        ``sensitive_categories_`` (sorted observed values): non-negative,
        summing to 1. ``None`` uses the dataset's proportions.
    init : "k-means++" or array-like of shape (n_clusters, n_features), \
            default="k-means++"
        Initial centres: scikit-learn's k-means++ seeding, or given centres.
    n_init : int, default=1
        Number of k-means++ initialisations; the run with the lowest final
        objective is kept. Must be 1 when ``init`` is an array.
    max_iter : int, default=100
        Maximum number of outer iterations (centre update, then bound
        optimisation of ``S``) per run, as in the authors' code.
    tol : float, default=1e-4
        A run stops, from its third outer iteration on, when the objective
        changes by no more than ``tol`` times the previous value of the
        authors' energy, which writes the KL term as a cross-entropy and so
        exceeds ``E`` by ``fairness_weight * n_clusters * H(U)`` (their rule).
    bound_max_iter : int, default=10000
        Maximum number of bound updates per outer iteration (the authors'
        value).
    bound_tol : float, default=1e-5
        The bound optimisation stops, from its third update on, when the
        bound changes by no more than ``bound_tol`` times its previous value.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means++ initialisations and the K-Means runs of the
        reseeds. The same value gives identical labels.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        ``argmax_k s_pk`` for each training point.
    soft_labels_ : ndarray of shape (n_samples, n_clusters)
        Final soft assignments ``S``.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centres of the last outer iteration, those ``S`` was optimised
        against.
    inertia_ : float
        Sum of squared distances of the points to the centre of their label.
    fairness_ : float
        ``sum_k KL(U || P_k)`` of the soft assignments over non-empty
        clusters (mass above 1e-20; group masses floored at 1e-20, as in the
        authors' code), not multiplied by ``fairness_weight`` (``nan``
        without sensitive features).
    objective_ : float
        Final value of ``E(S)``.
    objective_history_ : ndarray of shape (n_iter_,)
        ``E(S)`` after each outer iteration of the kept run.
    n_bound_iter_ : ndarray of shape (n_iter_,)
        Number of bound updates in each outer iteration (0 when the fairness
        term is off or the iteration was a reseed).
    n_iter_ : int
        Number of outer iterations of the kept run.
    n_threads_ : int
        The numba threads the fit ran under, decided once at its start as
        :class:`fairkm.FairKM` decides them (at most numba's threads and the
        CPUs the process may use, or ``FAIRKM_NUM_THREADS``). ZGYA's kernels
        are serial (a parallel pass would wait on a shared CPU at every bound
        update), so none of them uses more than one.
    n_reseeds_ : int
        Number of times the kept run reseeded after clusters emptied.
    cluster_proportions_ : ndarray of shape (n_clusters, n_values) or None
        ``P(j|k)`` of the soft assignments (``nan`` rows for empty clusters);
        ``None`` without sensitive features.
    target_proportions_ : ndarray of shape (n_values,) or None
        The target mix ``U`` used; ``None`` without sensitive features.
    sensitive_name_ : str or None
        Name of the sensitive attribute.
    sensitive_categories_ : ndarray or None
        Sorted observed values of the sensitive attribute.
    %(fitted_features)s

    See Also
    --------
    fairkm.FairKM : Fair K-Means over many sensitive attributes at once.
    BlindKMeans : K-Means ignoring the sensitive attributes.

    Notes
    -----
    **Algorithm** (the authors' released code). Centres start from k-means++
    and each point from its nearest centre. Each outer iteration:

    1. except in the first, each centre becomes the mean of the points with
       its label (hard labels, as in their code);
    2. with ``a_pk = ||x_p - c_k||^2``, ``S`` restarts from ``softmax(-a)``
       and is updated by bound optimisation: the KL term is split into a
       concave part (linearised) and a convex part with Lipschitz gradient,
       which gives the independent per-point update::

           b_pk = sum_j u_j (1 / 1^T S_k - v_jp / V_j^T S_k)
           s_p <- s_p * exp(-(a_p + fairness_weight * b_p) / L) / normaliser

       repeated until the bound changes by at most ``bound_tol``
       (relative) or ``bound_max_iter`` updates;
    3. labels become ``argmax_k s_pk``, and the run stops once ``E``
       changes by at most ``tol`` from the third iteration on, relative to
       their energy (``E`` with the KL term as a cross-entropy).

    **Empty clusters.** When a cluster has no nearest point before the bound
    optimisation, or no label after it, the run reseeds: centres and labels
    become those of scikit-learn's ``KMeans(n_clusters, n_init=10)`` on
    ``X`` (seeded from ``random_state``) and the loop goes on from them. The
    fourth time, the run stops and returns the clustering of the previous
    outer iteration (the authors' "trivial solution" exit) with a
    ``ConvergenceWarning``, as does a run whose result has fewer non-empty
    clusters than ``n_clusters``. With the fairness term on, their code
    checks the nearest centres before the bound optimisation but then runs
    it on the distances to the centres before the reseed; here it runs on
    the reseeded centres. Their run may also stop in the iteration of a
    reseed and return the K-Means reseed; here it goes on.

    **Stopping.** Their bound optimisation tests its ``bound_energy``, which
    weighs the KL part by 1 instead of ``L``; here the bound itself is tested
    (``docs/reproduction.md`` compares the two on Adult). An update costs
    O(n_samples * n_clusters); equal rows (same features and sensitive value)
    get equal assignments, so they are updated once, with their multiplicity.

    **The objective can rise** between outer iterations, as ``S`` restarts
    and the centres are means of hard labels. Carrying ``S`` over with
    ``S``-weighted centres would make every step lower ``E``, but it ended
    higher on real data (``docs/reproduction.md``), so it is not offered.

    Features are used as given: the authors scale each row of ``X`` to unit
    L2 norm, and their ``lambda`` values assume it. Large distances or a large
    ``fairness_weight / lipschitz`` make whole groups flip between clusters
    at each bound update, or empty clusters; a ``ConvergenceWarning`` says so.
    Scaling ``X`` down or raising ``lipschitz`` helps.

    **Without sensitive features** (or ``fairness_weight=0``) ``S`` is the
    hard nearest-centre assignment: Lloyd's K-Means from k-means++.

    **Published values** (K-Means variant, rows scaled to unit norm): Ziko et
    al. use ``lambda`` = 10 (Synthetic, Synthetic-unequal), 9000 (Adult),
    6000 (Bank) and 500000 (Census II), with ``L = 2`` in their released
    code; their first public version (2019) instead estimated ``L`` from the
    initial ``S``. The FairKM paper ran that June 2019 code with ``lambda =
    15``, on each sensitive attribute separately; its distance term differs
    (:mod:`fairkm.experiments` has it as ``zgya_2019``).

    ``predict`` assigns new points to the nearest centre and ignores fairness.

    **Inputs** are read as :class:`~fairkm.FairKM` reads them: a pandas
    ``sensitive_features`` is paired with ``X``'s rows by index label,
    ``fit(X, S)`` warns that S went to ``y``, and ``X`` whose squared
    distances would overflow is refused. There is no ``sample_weight``: the
    authors' algorithm and released code are unweighted.

    Examples
    --------
    >>> import numpy as np
    >>> from fairkm.cluster import ZGYA
    >>> rng = np.random.RandomState(0)
    >>> corners = np.repeat([[0.0, 0.0], [0.0, 0.9], [1.0, 0.0], [1.0, 0.9]], 50, axis=0)
    >>> X = corners + rng.normal(scale=0.075, size=corners.shape)
    >>> group = np.repeat(["a", "b"], 100)  # K-Means separates "a" (left) from "b" (right)
    >>> model = ZGYA(n_clusters=2, fairness_weight=300.0, random_state=0)
    >>> labels = model.fit(X, sensitive_features=group).labels_
    >>> [np.bincount(labels[group == g], minlength=2).tolist() for g in "ab"]
    [[50, 50], [50, 50]]
    """

    _parameter_constraints = {
        **FAMILY_CONSTRAINTS,
        "fairness_weight": [Interval(Real, 0, None, closed="left")],
        "lipschitz": [Interval(Real, 0, None, closed="neither")],
        "target_proportions": [None, "array-like"],
        "init": [StrOptions({"k-means++"}), "array-like"],
        "n_init": [at_least(1)],
        "bound_max_iter": [at_least(1)],
        "bound_tol": TOL,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        fairness_weight=15.0,
        lipschitz=2.0,
        target_proportions=None,
        init="k-means++",
        n_init=1,
        max_iter=100,
        tol=1e-4,
        bound_max_iter=10000,
        bound_tol=1e-5,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.fairness_weight = fairness_weight
        self.lipschitz = lipschitz
        self.target_proportions = target_proportions
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.bound_max_iter = bound_max_iter
        self.bound_tol = bound_tol
        self.random_state = random_state

    # ------------------------------------------------------------------ validation

    def _check_params_vs_input(self, X):
        """Check the parameters against ``X``; return the ``init`` centres (None: seeded)."""
        check_n_samples(X.shape[0], self.n_clusters)
        return check_init_centers(self.init, self.n_init, self.n_clusters, X.shape[1])

    def _check_sensitive(self, sensitive_features, n_samples):
        """Read the single categorical attribute.

        Returns ``None`` without sensitive features, else ``(features,
        targets)``: the attribute read
        (:class:`fairkm.utils._sensitive.SensitiveFeatures`) and the target mix.
        """
        if sensitive_features is None:
            if self.target_proportions is not None:
                raise ValueError(
                    "target_proportions was given but sensitive_features is None; "
                    "pass the sensitive attribute to fit."
                )
            return None
        sens = check_sensitive_features(sensitive_features, n_samples=n_samples)
        if sens.n_attributes != 1:
            raise ValueError(
                "ZGYA supports one sensitive attribute, got "
                f"{sens.n_attributes} ({list(sens.names)}); fit one model per attribute."
            )
        name = sens.names[0]
        if sens.kinds[0] == NUMERIC:
            raise ValueError(
                f"ZGYA supports a categorical sensitive attribute, but {name!r} is numeric "
                "(floating-point dtype). Pass its values as integers or strings to treat "
                "them as categories."
            )
        n_values = len(sens.categories[0])
        if self.target_proportions is None:
            return sens, np.bincount(sens.columns[0], minlength=n_values) / n_samples
        targets = np.asarray(self.target_proportions, dtype=np.float64)
        if targets.shape != (n_values,):
            raise ValueError(
                f"target_proportions must have one entry per value of {name!r} "
                f"({n_values}), got shape {targets.shape}."
            )
        if not np.all(np.isfinite(targets)) or np.any(targets < 0):
            raise ValueError(
                f"target_proportions must be finite and >= 0, got {targets.tolist()}."
            )
        if not np.isclose(targets.sum(), 1.0, rtol=0.0, atol=1e-8):
            raise ValueError(f"target_proportions must sum to 1, got {targets.sum()!r}.")
        return sens, targets

    # ------------------------------------------------------------------ fitting

    def _distances(self, rows, centers):
        """Squared distances of the distinct rows to ``centers``, shape (k, n_rows)."""
        return center_distances(rows.X, centers)

    def _objective(self, rows, S, dist, fair):
        """``E(S)``."""
        linear = weighted_sum(S, dist, rows.weights)
        if fair is None:
            return linear
        group_mass, mass = group_masses(S, rows.codes, rows.weights, fair.shape[0])
        return linear + self.fairness_weight * fairness_cost(group_mass, mass, fair)

    def _assign(self, rows, dist, fair):
        """``S`` for fixed centres: bound optimisation, or the nearest centre."""
        if fair is None:
            S = np.zeros_like(dist)
            S[np.argmin(dist, axis=0), np.arange(dist.shape[1])] = 1.0
            return S, 0
        S = softmax_columns(dist)
        group_mass, mass = group_masses(S, rows.codes, rows.weights, fair.shape[0])
        factors, col_min = bound_factors(dist, float(self.lipschitz))
        n_updates = optimise_bound(
            S, factors, dist, col_min, rows.codes, rows.weights, rows.starts, rows.stops,
            fair, float(self.fairness_weight), float(self.lipschitz), float(self.bound_tol),
            int(self.bound_max_iter), group_mass, mass,
        )
        return S, int(n_updates)

    def _reseed(self, X, rows, seed):
        """Centres and row labels of a seeded K-Means on ``X`` (the authors' reseed)."""
        kmeans = KMeans(self.n_clusters, n_init=_RESEED_N_INIT, random_state=seed).fit(X)
        return kmeans.cluster_centers_, kmeans.labels_[rows.index]

    def _run(self, X, rows, centers, fair, reseed_seeds):
        """One run from ``centers``; ``fair`` is None or the target mix."""
        k = self.n_clusters
        dist = self._distances(rows, centers)
        labels = np.argmin(dist, axis=0)
        present = np.zeros(0) if fair is None else fair[fair > 0]
        entropy = float(-np.sum(present * np.log(present)))
        S = objective = None
        history, bound_iters = [], []
        n_reseeds, trivial, converged = 0, False, False

        def covers(labels):
            return np.unique(labels).shape[0] == k

        def reseed():
            """Return the authors' reseed (centres, labels, distances); None once they are spent."""
            nonlocal n_reseeds
            if n_reseeds == _MAX_RESEEDS:
                return None
            new_centers, new_labels = self._reseed(X, rows, reseed_seeds[n_reseeds])
            n_reseeds += 1
            return new_centers, new_labels, self._distances(rows, new_centers)

        for it in range(self.max_iter):
            previous = (centers, labels, S, objective)
            if it > 0:
                centers = weighted_means(rows.X, labels, rows.weights, centers)
                dist = self._distances(rows, centers)
            if fair is not None and not covers(np.argmin(dist, axis=0)):
                reseeded = reseed()
                if reseeded is None:  # the authors' "trivial solution" exit
                    centers, labels, S, objective = previous
                    trivial = True
                    break
                centers, labels, dist = reseeded
            S, n_updates = self._assign(rows, dist, fair)
            labels = np.argmax(S, axis=0)
            objective = self._objective(rows, S, dist, fair)
            if not covers(labels):
                reseeded = reseed()
                if reseeded is None:
                    centers, labels, S, objective = previous
                    trivial = True
                    break
                centers, labels, dist = reseeded
                S = one_hot(labels, np.ones(labels.shape[0]), k)
                if fair is not None:
                    S = softmax_columns(dist)
                objective = self._objective(rows, S, dist, fair)
                history.append(objective)
                bound_iters.append(n_updates)
                continue
            history.append(objective)
            bound_iters.append(n_updates)
            # Relative to the authors' energy: each KL(U || P_k) as a cross-entropy, H(U) + KL.
            if it >= 2 and abs(objective - history[-2]) <= self.tol * abs(
                    history[-2] + self.fairness_weight * k * entropy):
                converged = True
                break
        return dict(
            labels=labels,
            S=S,
            centers=centers,
            dist=self._distances(rows, centers),
            objective=objective,
            history=np.array(history),
            bound_iters=np.array(bound_iters, dtype=np.int64),
            converged=converged,
            trivial=trivial,
            n_reseeds=n_reseeds,
        )

    def _warn(self, run):
        """Warn when the kept run stopped early, emptied clusters or its bound did not settle."""
        problems = []
        if run["trivial"]:
            problems.append(
                f"clusters emptied {_MAX_RESEEDS + 1} times, so after {_MAX_RESEEDS} reseeds "
                "the run stopped and kept its previous outer iteration (the authors' "
                "'trivial solution' exit)"
            )
        elif not run["converged"]:
            problems.append(
                f"the objective did not settle within max_iter={self.max_iter} outer "
                f"iterations (tol={self.tol})"
            )
        survivors = np.unique(run["labels"]).shape[0]
        if survivors < self.n_clusters:
            problems.append(
                f"only {survivors} of n_clusters={self.n_clusters} clusters are non-empty"
            )
        if run["bound_iters"].shape[0] and run["bound_iters"][-1] == self.bound_max_iter:
            problems.append(
                f"the last bound optimisation stopped at bound_max_iter={self.bound_max_iter} "
                f"without reaching bound_tol={self.bound_tol}"
            )
        if problems:
            warn(
                f"ZGYA: {'; '.join(problems)}. Slow convergence needs a larger max_iter or "
                "bound_max_iter; assignments that overshoot and oscillate or empty clusters "
                f"(large fairness_weight={self.fairness_weight} for "
                f"lipschitz={self.lipschitz}, or large distances in X) need a larger "
                "lipschitz or X scaled down.",
                ConvergenceWarning
            )

    def fit(self, X, y=None, *, sensitive_features=None):
        """Compute a fair clustering.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Non-sensitive features (numeric).
        y : Ignored
            Not used, present for API consistency. Given without
            ``sensitive_features`` it warns: ``fit(X, S)`` passes the
            attributes as ``y``, and the fit would ignore them.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, 1), \
                pandas Series or DataFrame, default=None
            The one categorical sensitive attribute; a pandas object is paired
            with ``X``'s rows by index label. ``None`` switches the fairness
            term off (Lloyd's K-Means).

        Returns
        -------
        self : ZGYA
            Fitted estimator.
        """
        self._validate_params()
        inputs = read_fit(self, X, y, sensitive_features, None, self._check_X)
        X = inputs.X
        init_centers = self._check_params_vs_input(X)
        encoded = self._check_sensitive(inputs.sensitive_features, X.shape[0])
        codes = np.zeros(X.shape[0], dtype=np.int64)
        fair = None
        warn_on_fit(X, feature_names(self, X.shape[1]), None if encoded is None else encoded[0],
                    kinds_by_dtype=True,
                    how_numeric="group its values into a few ranges (ZGYA takes one "
                    "categorical attribute), or use FairKM, which takes it as numeric",
                    how_to_weight=_NO_WEIGHTS)
        if encoded is not None:
            features, targets = encoded
            codes = features.columns[0]
            if self.fairness_weight > 0:
                fair = targets
        rows = _Rows(X, codes)

        x_squared_norms = np.einsum("ij,ij->i", X, X)
        rng = check_random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self.n_init)
        reseed_seeds = rng.randint(np.iinfo(np.int32).max, size=(self.n_init, _MAX_RESEEDS))
        best = None
        with decided_threads() as n_threads:  # one decision per fit, as the family's
            for seed, reseeds in zip(seeds, reseed_seeds, strict=True):
                if init_centers is None:
                    centers, _ = kmeans_plusplus(
                        X, self.n_clusters, x_squared_norms=x_squared_norms, random_state=seed
                    )
                else:
                    centers = init_centers.copy()
                run = self._run(X, rows, centers, fair, reseeds)
                if best is None or run["objective"] < best["objective"]:
                    best = run
        self._warn(best)
        warn_if_duplicate_centers(type(self).__name__, best["centers"], self.n_clusters)

        S, inverse = best["S"], rows.inverse
        self.labels_ = best["labels"][inverse]
        self.soft_labels_ = np.ascontiguousarray(S.T[inverse])
        self.cluster_centers_ = best["centers"]
        self.inertia_ = _sums.weighted_sum(
            best["dist"][best["labels"], np.arange(rows.weights.shape[0])], rows.weights)
        self.objective_ = best["objective"]
        self.objective_history_ = best["history"]
        self.n_bound_iter_ = best["bound_iters"]
        self.n_iter_ = len(best["history"])
        self.n_threads_ = n_threads
        self.n_reseeds_ = best["n_reseeds"]
        if encoded is None:
            self.sensitive_name_ = self.sensitive_categories_ = self.target_proportions_ = None
            self.cluster_proportions_ = None
            self.fairness_ = np.nan
            return self
        self.sensitive_name_ = features.names[0]
        self.sensitive_categories_ = features.categories[0]
        self.target_proportions_ = targets
        group_mass, mass = group_masses(S, rows.codes, rows.weights, targets.shape[0])
        self.cluster_proportions_ = np.full(group_mass.T.shape, np.nan)
        np.divide(
            group_mass.T,
            mass[:, None],
            out=self.cluster_proportions_,
            where=mass[:, None] > KL_FLOOR,
        )
        self.fairness_ = fairness_cost(group_mass, mass, targets)
        return self

    def _nearest_centers(self, X):
        with decided_threads():  # one decision per call, as the family's
            return np.argmin(center_distances(X, self.cluster_centers_), axis=0)


class _Rows:
    """The distinct (features, group) rows of a fit, their weights and segments."""

    def __init__(self, X, codes):
        self.index, self.weights, self.inverse = distinct_rows(X, codes)
        self.X = np.ascontiguousarray(X[self.index])
        self.codes = np.ascontiguousarray(codes[self.index])
        self.starts, self.stops = segments(self.codes, self.weights)
