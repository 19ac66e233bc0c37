"""The estimators' shared docstring entries, written once (see ``fairkm.utils._docstrings``).

``fill_estimator_docstring`` fills a class docstring's whole-line placeholders
(``%(n_clusters)s``) from these entries and the inputs' own; what a measured
number says about an option lives in ``docs/``, not here.
"""

from fairkm.utils._docstrings import INPUT_ENTRIES, docstring_filler

__all__ = ["ESTIMATOR_ENTRIES", "fill_estimator_docstring"]

ESTIMATOR_ENTRIES = {
    "n_clusters": """\
n_clusters : int, default=8
    Number of clusters; every one of them is non-empty after fitting.""",
    "fairness_weight": """\
fairness_weight : "auto", "paper" or float, default="auto"
    Weight ``lambda`` of the fairness term. ``"auto"`` measures it against
    the S-blind clustering: the fit first reaches a K-Means clustering
    (weight 0), then continues from it so that 1% less unfairness (the
    clusters' distance from the dataset's mix) is worth ``relative_weight``
    % more K-Means cost there, the attributes measured in common units; the
    same setting then means the same trade whatever the units of ``X``, the
    number of rows or of an attribute's values. ``"paper"`` is the paper's
    heuristic ``(n_samples / n_clusters) ** 2`` (section 5.4), ``n_samples``
    being the total weight with ``sample_weight``. A number is the paper's
    absolute ``lambda``; ``0`` gives plain (point-by-point) K-Means.
    ``"auto"`` reads only the weights' ratios; ``"paper"`` and a number
    weigh the fairness term against a K-Means term that grows with the
    weights, so weights multiplied by ``c`` fit as every row repeated ``c``
    times would.""",
    "relative_weight": """\
relative_weight : float, default=1.0
    With ``fairness_weight="auto"``: how much fairness counts against
    K-Means cost, both relative to the S-blind clustering. ``0`` is the
    S-blind clustering itself; 2 values fairness twice as much, at a price
    that falls as the cost mounts (see Notes; ``docs/fairness-weight.md``
    shows what each weight cost on real data).""",
    "max_cost": """\
max_cost : float or None, default=None
    A budget instead of ``relative_weight`` (with ``fairness_weight="auto"``):
    the fairest clustering found whose K-Means term is at most ``1 +
    max_cost`` times the S-blind clustering's (``0.05``: at most 5%
    costlier; at most 1, a larger number is refused as a percentage, as
    on the command line), on the path of ``relative_weight``. A ``UserWarning`` says
    when the budget bought no fairness or spent under half of itself.""",
    "max_unfairness": """\
max_unfairness : float or None, default=None
    A fairness target instead (with ``fairness_weight="auto"``): the
    cheapest clustering found whose unfairness (``unfairness_ratio_``) is at
    most this fraction of the S-blind clustering's, in (0, 1). A warning
    says so when no weight reaches it (the fairest clustering found is
    kept).""",
    "attribute_weights": """\
attribute_weights : array-like of shape (n_attributes,), dict or None, default=None
    Per-attribute weights ``w_S`` (paper Eq. 22), non-negative. A dict maps
    attribute names to weights (attributes not named get 1). ``None``
    weighs every attribute 1.""",
    "cluster_weighting": """\
cluster_weighting : {"auto", "equal", "size", "paper"}, default="auto"
    How much each cluster's deviations count in the fairness term:
    ``"equal"`` weighs every cluster alike (``e = 0``), ``"size"`` by its
    share of the rows ``|C|/n`` (``e = 1``), ``"paper"`` by the square of it
    (``e = 2``, paper Eq. 7), which mostly repairs the largest clusters.
    ``"auto"``: ``"equal"`` with ``fairness_weight="auto"``, so that each
    cluster's mix counts as a report shows it (``docs/frontier.md`` compares
    the three); ``"paper"`` with an absolute or ``"paper"`` weight, which
    then reproduces the paper's objective exactly.""",
    "intersections": """\
intersections : list of tuple of str or None, default=None
    Intersectional groups as extra attributes: ``[("sex", "race")]`` adds an
    attribute ``"sex & race"`` whose values are the combinations that occur
    (``"Female & White"``), weighed like any other attribute (also in
    ``attribute_weights``, by that name). Only categorical attributes can
    be intersected.""",
    "init_size": """\
init_size : int or None, default=None
    Number of rows k-means++ seeds on, drawn at random (seeded by
    ``random_state``) when there are more. ``None``: ``max(100_000, 100 *
    n_clusters)``; seeding costs O(n k), and on more rows the seeds are no
    better once the sweeps have run.""",
    "verbose": """\
verbose : int or bool, default=0
    Print the objective after each pass over the data (a sweep, a
    mini-batch epoch or a Dask round) when positive.""",
    "X_new": """\
X : array-like of shape (n_samples, n_features)
    New data.""",
    "fitted_features": """\
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (n_features_in_,)
    Names of the features, when ``X`` is a DataFrame with string columns.""",
    "warns_without_sensitive": """\
UserWarning
    When the model was fitted with sensitive features and a positive
    ``fairness_weight_`` but ``sensitive_features`` is None.""",
    # The fitted attributes both FairKM estimators set.
    "fitted_objective": """\
fairness_ : float
    Fairness term, not multiplied by ``fairness_weight_``.
objective_ : float
    ``inertia_ + fairness_weight_ * fairness_``.""",
    "fitted_weights": """\
fairness_weight_ : float
    The absolute ``lambda`` used: ``fairness_weight=fairness_weight_`` with
    ``attribute_weights=attribute_weights_`` has the same objective.
attribute_weights_ : ndarray of shape (n_attributes,)
    The attribute weights ``w_S`` used. With ``fairness_weight="auto"``,
    ``attribute_weights`` divided by each attribute's scale (its fairness
    term under full segregation, per unit of cluster weight), scaled to the
    same total.
cluster_weighting_ : str
    The cluster weighting used: ``"equal"``, ``"size"`` or ``"paper"``.
relative_weight_ : float
    The relative weight of the fit: ``relative_weight``, or the one a budget
    ended at (the weight of its last phase priced at its own cost, ``w (1 +
    cost_increase_)``); NaN with an absolute weight.
refit_params_ : dict
    What to change for a fresh fit on the same data to give the same
    clustering (``clone(model).set_params(**model.refit_params_)``):
    ``{"max_cost": None, "relative_weight": relative_weight_}`` when a
    budget's clustering is the fit at that weight, ``{}`` otherwise.""",
    "fitted_fairness": """\
attribute_fairness_ : ndarray of shape (n_attributes,)
    Each attribute's fairness term (weight 1) in the fitted clustering.
cluster_deviation_ : ndarray of shape (n_attributes, n_clusters)
    Each cluster's distance from the dataset's mix, per attribute: the
    total-variation distance between the cluster's and the dataset's
    proportions for a categorical attribute (in [0, 1]), the gap between the
    cluster's mean of the standardised attribute and the dataset's for a
    numeric one. ``.mean(axis=1)`` and ``.max(axis=1)`` are each attribute's
    mean and worst cluster.
cost_increase_ : float
    ``inertia_`` over the S-blind clustering's, minus 1: the price of
    fairness (NaN with an absolute weight).
unfairness_ratio_ : float
    Each attribute's mean ``cluster_deviation_`` over the clusters, summed
    over the attributes with ``attribute_weights``, over the same sum for
    the S-blind clustering (NaN with an absolute weight). Compare
    ``cluster_deviation_`` with the S-blind clustering's attribute by
    attribute: one attribute left nearly fair cannot then hide another.
blind_clustering_ : fairkm.cluster.BlindClustering or None
    The S-blind clustering the fit was measured against: its ``inertia``,
    ``attribute_fairness`` and ``cluster_deviation`` (None with an absolute
    weight).
sensitive_attributes_ : fairkm.cluster.SensitiveAttributes
    What the fit learned of the sensitive attributes: their ``names``,
    ``kinds``, the ``categories`` and ``proportions`` of the categorical
    ones, the ``means`` and ``scales`` standardising the numeric ones.""",
}

# How much fairness counts, as both FairKM estimators take it.
ESTIMATOR_ENTRIES["weight_parameters"] = "\n".join(
    ESTIMATOR_ENTRIES[name] for name in ("fairness_weight", "relative_weight"))

fill_estimator_docstring = docstring_filler(INPUT_ENTRIES, ESTIMATOR_ENTRIES)
