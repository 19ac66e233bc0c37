"""A fairness-aware scorer for model selection: the fairest setting within a cost budget.

The scorer compares the estimator's clustering of the scored rows with S-blind
K-Means on the same rows: its K-Means cost against the budget, its unfairness
(one measure of :data:`~fairkm.metrics.MEASURES`) relative to K-Means'.
"""

from __future__ import annotations

import inspect
import numbers
import textwrap

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.pipeline import Pipeline
from sklearn.utils import check_array
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from fairkm.utils._param_validation import (
    NUMERIC_SENSITIVE,
    RANDOM_STATE,
    Share,
    StrOptions,
    at_least,
    check_param,
)
from fairkm.utils._threads import decided_pool_threads

from ._checks import Rows
from ._docstrings import fill_docstring
from ._quality import clustering_objective
from ._table import MEASURES

__all__ = ["make_fair_clustering_scorer"]

# Scores at or above -OVER_BUDGET are within the cost budget; below, over it.
OVER_BUDGET = 1e6

_FAIRNESS_MEASURES = tuple(m.name for m in MEASURES.values() if m.kind == "fairness")
_METADATA = ("sensitive_features", "sample_weight")


def _ratio(value, reference):
    """``value / reference``, with 0/0 = 1 and x/0 = inf."""
    if reference == 0:
        return 1.0 if value == 0 else np.inf
    return value / reference


def _final_step(estimator, X):
    """Return the estimator that makes the labels, and ``X`` as it reaches it."""
    while isinstance(estimator, Pipeline):
        if len(estimator.steps) > 1:
            X = estimator[:-1].transform(X)
        estimator = estimator.steps[-1][1]
    return estimator, X


def _n_clusters(estimator):
    n_clusters = getattr(estimator, "n_clusters", None)
    if isinstance(n_clusters, numbers.Integral) and not isinstance(n_clusters, bool):
        return int(n_clusters)
    centers = getattr(estimator, "cluster_centers_", None)
    if centers is not None:
        return int(np.shape(centers)[0])
    raise TypeError(
        "the fair clustering scorer needs the number of clusters: an integer n_clusters "
        f"parameter or a fitted cluster_centers_, and {type(estimator).__name__} has neither."
    )


def _labels(estimator, X, sensitive_features):
    predict = getattr(estimator, "predict", None)
    if predict is None:
        raise TypeError(
            "the fair clustering scorer needs an estimator with a predict method, got "
            f"{type(estimator).__name__}."
        )
    if "sensitive_features" in inspect.signature(predict).parameters:
        return predict(X, sensitive_features=sensitive_features)
    return predict(X)


class _FairClusteringScorer:
    """Scorer made by :func:`make_fair_clustering_scorer`; see there for what it returns.

    Parameters
    ----------
    max_cost, measure, n_init, random_state, numeric_sensitive, sensitive_features
        As in :func:`make_fair_clustering_scorer`.
    """

    def __init__(self, *, max_cost, measure, n_init, random_state, numeric_sensitive,
                 sensitive_features):
        self.max_cost = max_cost
        self.measure = measure
        self.n_init = n_init
        self.random_state = random_state
        self.numeric_sensitive = numeric_sensitive
        self.sensitive_features = sensitive_features
        self._requests = dict.fromkeys(_METADATA, True)

    def __repr__(self):
        return (f"make_fair_clustering_scorer(max_cost={self.max_cost!r}, "
                f"measure={self.measure!r})")

    def __call__(self, estimator, X, y=None, *, sensitive_features=None, sample_weight=None):
        """Score a fitted clusterer on ``X``: higher is fairer, within the cost budget.

        Parameters
        ----------
        estimator : fitted estimator or Pipeline
            Its last step has ``predict`` and ``n_clusters`` (or
            ``cluster_centers_``).
        X : array-like of shape (n_samples, n_features)
            The rows to score, before the pipeline's transforms.
        y : None
            Ignored.
        sensitive_features : array-like, Series or DataFrame, default=None
            The rows' sensitive attributes (a Series or DataFrame is paired
            with a DataFrame ``X`` by index label); ``None`` looks them up in
            the ``sensitive_features`` the scorer was made with, by
            ``X.index``.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, for both costs and both measures (not for
            ``predict``); a Series is paired with a DataFrame ``X`` by index
            label.

        Returns
        -------
        float
            See :func:`make_fair_clustering_scorer`.
        """
        return self.evaluate(estimator, X, sensitive_features=sensitive_features,
                             sample_weight=sample_weight)["score"]

    def evaluate(self, estimator, X, *, sensitive_features=None, sample_weight=None):
        """Score ``X`` and return the numbers behind the score.

        Parameters
        ----------
        estimator : fitted estimator or Pipeline
            As in calling the scorer.
        X : array-like of shape (n_samples, n_features)
            As in calling the scorer.
        sensitive_features : array-like, Series or DataFrame, default=None
            As in calling the scorer.
        sample_weight : array-like of shape (n_samples,), default=None
            As in calling the scorer.

        Returns
        -------
        dict
            ``cost`` and ``blind_cost`` (the clustering objective of the
            estimator's and of K-Means' labels), ``cost_ratio`` (their
            ratio), ``within_budget`` (``cost_ratio <= 1 + max_cost``),
            ``unfairness`` and ``blind_unfairness`` (the measure of each),
            ``unfairness_ratio`` (the estimator's over K-Means'; for a measure
            where higher is fairer, K-Means' over the estimator's) and
            ``score``.
        """
        self._check_params()
        # The rows' attributes and weights are paired with X's index once, before
        # the pipeline's transforms (which may drop it) and predict.
        rows = Rows(("X", X), by_position="X")
        if sensitive_features is None:
            sensitive_features = self._bound_features(X)
        sensitive_features = rows.pair(sensitive_features, "sensitive_features")
        final, Xt = _final_step(estimator, X)
        labels = _labels(final, Xt, sensitive_features)
        n_clusters = _n_clusters(final)
        Xt = check_array(Xt, dtype=np.float64, input_name="X")
        sample_weight, unit = rows.weights(sample_weight, Xt.shape[0])
        # K-Means fitted, as the estimators are, on the weights brought near 1 (an
        # exact power of two away): weights of 1e300 would overflow its inertia.
        # On one thread up to 50,000 rows, else a fit's count: never the load's.
        with decided_pool_threads(n_rows=Xt.shape[0]):
            blind = KMeans(n_clusters=n_clusters, n_init=self.n_init,
                           random_state=self.random_state).fit(
                Xt, sample_weight=None if sample_weight is None else sample_weight / unit)
        cost = clustering_objective(Xt, labels, sample_weight=sample_weight)
        blind_cost = clustering_objective(Xt, blind.labels_, sample_weight=sample_weight)
        measure = MEASURES[self.measure]
        kwargs = {"sensitive_features": sensitive_features, "sample_weight": sample_weight,
                  "numeric_sensitive": self.numeric_sensitive}
        unfairness = measure.function(labels, **kwargs)
        blind_unfairness = measure.function(blind.labels_, **kwargs)
        if measure.higher_is_better:
            ratio = _ratio(blind_unfairness, unfairness)
        else:
            ratio = _ratio(unfairness, blind_unfairness)
        cost_ratio = _ratio(cost, blind_cost)
        excess = cost_ratio - (1.0 + self.max_cost)
        within = bool(excess <= 0)
        if within:
            score = -min(ratio, OVER_BUDGET)
        else:
            score = -(OVER_BUDGET + 1.0 + min(excess, OVER_BUDGET))
        return {
            "cost": cost, "blind_cost": blind_cost, "cost_ratio": cost_ratio,
            "within_budget": within, "unfairness": unfairness,
            "blind_unfairness": blind_unfairness, "unfairness_ratio": ratio,
            "score": float(score),
        }

    def _check_params(self):
        caller = "make_fair_clustering_scorer"
        check_param("max_cost", self.max_cost, [Share()], caller)
        check_param("measure", self.measure, [StrOptions(set(_FAIRNESS_MEASURES))], caller)
        check_param("n_init", self.n_init, [at_least(1)], caller)
        check_param("random_state", self.random_state, RANDOM_STATE, caller)
        check_param("numeric_sensitive", self.numeric_sensitive, NUMERIC_SENSITIVE, caller)
        # The scorer finds the scored rows by X.index.
        check_param("sensitive_features", self.sensitive_features,
                    [None, pd.Series, pd.DataFrame], caller)

    def _bound_features(self, X):
        if self.sensitive_features is None:
            raise ValueError(
                "the fair clustering scorer got no sensitive_features. Turn metadata routing "
                "on (sklearn.set_config(enable_metadata_routing=True)) and pass "
                "sensitive_features to the search's fit, or make the scorer with "
                "sensitive_features= a Series or DataFrame indexed like X."
            )
        index = getattr(X, "index", None)
        if not isinstance(index, pd.Index):
            raise TypeError(
                "the fair clustering scorer looks the scored rows up by X.index in its own "
                f"sensitive_features, so X must be a pandas DataFrame, got {type(X).__name__}."
            )
        bound = self.sensitive_features
        if not bound.index.is_unique:
            raise ValueError("the scorer's sensitive_features has a duplicate index value.")
        missing = index.difference(bound.index)
        if len(missing):
            raise ValueError(
                f"the scorer's sensitive_features has no row for X's index {missing[0]!r}."
            )
        return bound.loc[index]

    def get_metadata_routing(self):
        """Metadata requested by the scorer: ``sensitive_features`` and ``sample_weight``.

        Both are requested by default; :meth:`set_score_request` changes that.

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRequest
            The scorer's requests, under ``score``.
        """
        request = MetadataRequest(owner=repr(self))
        for param, alias in self._requests.items():
            request.score.add_request(param=param, alias=alias)
        return request

    def set_score_request(self, *, sensitive_features=UNCHANGED, sample_weight=UNCHANGED):
        """Set which metadata a meta-estimator routes to the scorer (metadata routing on).

        Parameters
        ----------
        sensitive_features : bool, None or str, default=UNCHANGED
            ``True`` (the default request): routed; ``False``: not routed;
            ``None``: error if passed; a string: routed from metadata of that
            name.
        sample_weight : bool, None or str, default=UNCHANGED
            The same for the weights (requested by default).

        Returns
        -------
        self : object
            The scorer, its requests updated.
        """
        for param, alias in (("sensitive_features", sensitive_features),
                             ("sample_weight", sample_weight)):
            if alias is not UNCHANGED:
                # Validates the value as scikit-learn does.
                MetadataRequest(owner=repr(self)).score.add_request(param=param, alias=alias)
                self._requests[param] = alias
        return self


def _fill_measures(func):
    # The list of measures is read from the table, never typed.
    names = ", ".join(f'``"{name}"``' for name in _FAIRNESS_MEASURES)
    text = (f"The fairness measure: one of {names} (the fairness measures of "
            ":data:`~fairkm.metrics.MEASURES`), averaged over the attributes.")
    entry = 'measure : str, default="AE"\n' + textwrap.indent(textwrap.fill(text, 72), "    ")
    return fill_docstring(func, entries={"fairness_measure": entry})


@_fill_measures
def make_fair_clustering_scorer(max_cost=0.05, *, measure="AE", n_init=10, random_state=0,
                                numeric_sensitive="auto", sensitive_features=None):
    r"""Make a scorer that picks the fairest clustering within a K-Means cost budget.

    Usable as ``scoring=`` in :class:`~sklearn.model_selection.GridSearchCV`,
    :func:`~sklearn.model_selection.cross_validate` and the like. Called as
    ``scorer(estimator, X, sensitive_features=S)``, it

    1. takes the estimator's labels of ``X``: for a
       :class:`~sklearn.pipeline.Pipeline`, ``X`` is transformed by the steps
       before the last, and the last step's ``predict`` gets
       ``sensitive_features=S`` when it takes that argument (FairKM does);
    2. fits S-blind :class:`~sklearn.cluster.KMeans` with the estimator's
       number of clusters, ``n_init`` and ``random_state`` on the same
       (transformed) rows, on one thread up to 50,000 rows, else on the
       count a fit would decide (``FAIRKM_NUM_THREADS`` sets it in both cases);
    3. compares the two clusterings: the cost ratio
       :math:`c = CO / CO_{KM}` (:func:`clustering_objective` of each
       clustering's labels, K-Means' being at most its ``inertia_``) and the
       unfairness ratio :math:`r = m / m_{KM}` of ``measure``
       (:math:`m_{KM} / m` for balance, where higher is fairer), with
       :math:`0/0 = 1`.

    Parameters
    ----------
    max_cost : float, default=0.05
        The budget: a clustering is within it when its cost ratio is at most
        ``1 + max_cost`` (0.05: at most 5% costlier than K-Means); in [0, 1],
        a larger number is refused as a percentage.
    %(fairness_measure)s
    n_init : int, default=10
        K-Means restarts.
    random_state : int, RandomState instance or None, default=0
        Seeds K-Means; an int makes every score reproducible.
    %(numeric_sensitive)s
    sensitive_features : Series or DataFrame, default=None
        Only for metadata routing off: the sensitive attributes of every row,
        indexed like ``X`` (a DataFrame). When a call gets no
        ``sensitive_features``, the scorer takes the rows of this one with
        the index of the scored ``X``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y=None, *, sensitive_features=None,
        sample_weight=None)`` returns a float, higher is better:

        - within the budget, :math:`-\min(r, 10^6)`: 0 is perfectly fair, -1
          as unfair as K-Means, -0.6 is 40% less unfair than K-Means;
        - over it, :math:`-(10^6 + 1 + \min(e, 10^6))`, where
          :math:`e = c - (1 + \text{max\_cost}) > 0` is the cost over the
          budget: below every score within the budget, and the nearer the
          budget the higher.

        ``scorer.evaluate(estimator, X, sensitive_features=S)`` returns the
        numbers behind the score. ``sample_weight`` weighs both costs and both
        measures (and K-Means' fit), not ``predict``.

    Notes
    -----
    **Selection.** A search's best setting maximises the score: the fairest
    setting within the budget on every split, or, when no setting is within
    it, the least over it. Averaged over *n* splits, a setting over the
    budget on any split scores below :math:`-10^6 / n`, so below every
    setting within it on all splits (unless one of those is :math:`10^6 / n`
    times as unfair as K-Means).

    **In-sample or held out.** K-Means is fitted on the scored rows
    themselves. Under cross-validation the estimator predicts rows it was not
    fitted on, so its cost ratio carries its out-of-sample loss as well (its
    size depends on the data). To compare like
    with like, score each setting on the rows it was fitted on,
    ``cv=[(rows, rows)]`` with ``rows = np.arange(n_samples)``; on held-out
    rows, allow for that loss in ``max_cost``.

    **Metadata routing on** (``sklearn.set_config(enable_metadata_routing=True)``):
    the scorer requests ``sensitive_features`` and ``sample_weight`` for
    ``score``, so ``GridSearchCV(..., scoring=scorer).fit(X,
    sensitive_features=S)`` gives each split's test rows of ``S`` to the scorer
    (and the training rows to the estimator, if it requests them for
    ``fit``). ``scorer.set_score_request(sample_weight=False)`` scores
    unweighted.

    **Metadata routing off:** a search passes its fit parameters only to
    ``fit`` (``fairkm__sensitive_features=S`` for a pipeline) and only
    ``sample_weight`` to a scorer. Pass ``X`` as a DataFrame and make the
    scorer with ``sensitive_features=S``, a Series or DataFrame with ``X``'s
    index: it looks up each split's rows by ``X.index``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.cluster import KMeans
    >>> from fairkm.metrics import make_fair_clustering_scorer
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1], [5.2], [5.3]])
    >>> S = ["a", "a", "b", "b", "a", "a", "b", "b"]
    >>> scorer = make_fair_clustering_scorer(max_cost=0.05)
    >>> model = KMeans(2, n_init=10, random_state=0).fit(X)
    >>> scorer(model, X, sensitive_features=S)  # K-Means itself: as unfair as K-Means
    -1.0
    """
    scorer = _FairClusteringScorer(
        max_cost=max_cost, measure=measure, n_init=n_init, random_state=random_state,
        numeric_sensitive=numeric_sensitive, sensitive_features=sensitive_features,
    )
    scorer._check_params()
    return scorer
