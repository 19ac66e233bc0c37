"""Fairness per sensitive attribute: AE, AW, CW, ME, MW, balance, KL and MPV.

Each measure compares every cluster's distribution of the attribute with the
dataset's, and is a public function over labels and sensitive features plus
its value for one attribute (``average_euclidean_of`` for
:func:`average_euclidean`...), read from the attribute's shared per-cluster
pieces (:class:`~fairkm.metrics._pieces.AttributePieces`: the contingency
table of a categorical attribute, the per-cluster distances). The table of
measures registers both (:data:`~fairkm.metrics.MEASURES`).

With sample weights (a row of weight w counts as w rows) the table holds
weighted counts, the standardisation uses the weighted mean and standard
deviation, cluster sizes are total weights, and the numeric Wasserstein
distance compares weighted empirical distributions. Rows of weight zero are
dropped first and unit weights take the unweighted paths
(:func:`~fairkm.metrics._checks.prepare_fairness`).
"""

from __future__ import annotations

import inspect

import numpy as np

from ._checks import check_conventions, check_option, prepare_fairness
from ._docstrings import fill_docstring
from ._pieces import AttributePieces

__all__ = [
    "average_euclidean",
    "average_euclidean_of",
    "average_wasserstein",
    "average_wasserstein_of",
    "balance",
    "balance_of",
    "kl_fairness_error",
    "kl_fairness_error_of",
    "max_euclidean",
    "max_euclidean_of",
    "max_proportional_violation",
    "max_proportional_violation_of",
    "max_wasserstein",
    "max_wasserstein_of",
    "mean_cluster_wasserstein",
    "mean_cluster_wasserstein_of",
]

_MULTIOUTPUT = ("raw_values", "uniform_average")


# --------------------------------------------------------------------------- one attribute


def _size_weighted_mean(sizes, per_cluster):
    return float(np.dot(sizes, per_cluster) / sizes.sum())


def average_euclidean_of(pieces):
    """AE of one attribute, from its :class:`~fairkm.metrics._pieces.AttributePieces`."""
    return _size_weighted_mean(pieces.sizes, pieces.euclidean_distances)


def max_euclidean_of(pieces):
    """ME of one attribute, from its pieces."""
    return float(pieces.euclidean_distances.max())


def average_wasserstein_of(pieces):
    """AW of one attribute, from its pieces."""
    return _size_weighted_mean(pieces.sizes, pieces.wasserstein_distances)


def mean_cluster_wasserstein_of(pieces):
    """CW of one attribute, from its pieces."""
    return float(pieces.wasserstein_distances.mean())


def max_wasserstein_of(pieces):
    """MW of one attribute, from its pieces."""
    return float(pieces.wasserstein_distances.max())


def balance_of(pieces):
    """Balance of one categorical attribute, from its pieces."""
    counts = pieces.counts
    return float((counts.min(axis=1) / counts.max(axis=1)).min())


def kl_fairness_error_of(pieces):
    """KL of one categorical attribute, from its pieces."""
    props, overall = pieces.proportions
    # With eps == 0 a value missing from a cluster gives log(0) = -inf, hence an
    # infinite (and correct) divergence; silence only that division warning.
    with np.errstate(divide="ignore"):
        terms = overall * (np.log(overall) - np.log(np.maximum(props, pieces.eps)))
    return float(terms.sum())


def max_proportional_violation_of(pieces):
    """MPV of one categorical attribute, from its pieces."""
    props, overall = pieces.proportions
    upper = overall / (1.0 - pieces.delta)
    lower = overall * (1.0 - pieces.delta)
    return float(np.maximum(np.maximum(props - upper, lower - props), 0.0).max())


# --------------------------------------------------------------------------- measures


def _attribute_scores(of_attribute, labels, sensitive_features, sample_weight, numeric_sensitive,
                      intersections, multioutput, *, categorical_only=False, **conventions):
    """Apply a measure to each attribute and aggregate as ``multioutput`` says.

    ``of_attribute(pieces)`` is the measure of one attribute (``pieces``, its
    :class:`~fairkm.metrics._pieces.AttributePieces` built with the measure's
    ``conventions``); a ``categorical_only`` measure is NaN for a numeric
    attribute.
    """
    check_conventions(**conventions)
    check_option(multioutput, "multioutput", _MULTIOUTPUT)
    codes, n_clusters, sf, weights = prepare_fairness(
        labels, sensitive_features, numeric_sensitive, sample_weight, intersections
    )
    sizes = np.bincount(codes, weights=weights, minlength=n_clusters)
    scores = np.full(sf.n_attributes, np.nan)
    for j in range(sf.n_attributes):
        pieces = AttributePieces(codes, n_clusters, sizes, sf, j, weights, **conventions)
        if pieces.categorical or not categorical_only:
            scores[j] = of_attribute(pieces)
    if categorical_only and np.isnan(scores).all():
        measure = of_attribute.__name__.removesuffix("_of")
        raise ValueError(
            f"{measure} is defined for categorical sensitive attributes only, and every "
            f"attribute is numeric: {sf.names}. Bin them, or pass numeric_sensitive=False."
        )
    if multioutput == "raw_values":
        return scores
    return float(np.nanmean(scores))


def _measure_sections(returns):
    """Write a measure's Parameters, Returns and Notes after its own text.

    Every parameter of a fairness measure is a shared docstring entry of the
    same name (:mod:`fairkm.metrics._docstrings`), so its Parameters section
    is read from its signature; ``returns`` says how to read the value.
    """

    def fill(func):
        if func.__doc__ is None:  # python -OO
            return func
        names = list(inspect.signature(func).parameters)
        sections = ["Parameters", "----------", *(f"%({name})s" for name in names), "",
                    "Returns", "-------", "%(fairness_returns)s", f"    {returns}"]
        if "wasserstein" in names:
            sections += ["", "Notes", "-----", "%(wasserstein_notes)s"]
        func.__doc__ = inspect.cleandoc(func.__doc__) + "\n\n" + "\n".join(sections) + "\n"
        return fill_docstring(func)

    return fill


@_measure_sections("0 when every cluster has the dataset's mix; lower is fairer.")
def average_euclidean(labels, *, sensitive_features, sample_weight=None, numeric_sensitive="auto",
                      intersections=None, multioutput="uniform_average"):
    r"""Average Euclidean fairness deviation (AE).

    For a categorical attribute S with dataset distribution :math:`X_S` and
    cluster distributions :math:`C_S` over its values,

    .. math::

        AE_S = \frac{\sum_C |C| \, \lVert C_S - X_S \rVert_2}{\sum_C |C|},

    the paper's cluster-cardinality weighted average. For a numeric attribute
    the cluster-level deviation is :math:`|\bar z_C - \bar z|`, the gap between
    the cluster's and the dataset's mean of the standardised values (the
    quantity the FairKM objective penalises for numeric attributes), in
    standard deviations.
    """
    return _attribute_scores(average_euclidean_of, labels, sensitive_features, sample_weight,
                             numeric_sensitive, intersections, multioutput)


@_measure_sections("Lower is fairer.")
def max_euclidean(labels, *, sensitive_features, sample_weight=None, numeric_sensitive="auto",
                  intersections=None, multioutput="uniform_average"):
    r"""Maximum Euclidean fairness deviation (ME).

    .. math::

        ME_S = \max_C \lVert C_S - X_S \rVert_2

    over the non-empty clusters: the skew of the least representative
    cluster. Numeric attributes use :math:`|\bar z_C - \bar z|` as in
    :func:`average_euclidean`.
    """
    return _attribute_scores(max_euclidean_of, labels, sensitive_features, sample_weight,
                             numeric_sensitive, intersections, multioutput)


@_measure_sections("Lower is fairer.")
def average_wasserstein(labels, *, sensitive_features, sample_weight=None,
                        numeric_sensitive="auto", intersections=None, wasserstein="principled",
                        multioutput="uniform_average"):
    r"""Average Wasserstein fairness deviation (AW).

    .. math::

        AW_S = \frac{\sum_C |C| \, W(C_S, X_S)}{\sum_C |C|}
    """
    return _attribute_scores(average_wasserstein_of, labels, sensitive_features, sample_weight,
                             numeric_sensitive, intersections, multioutput,
                             wasserstein=wasserstein)


@_measure_sections("Lower is fairer.")
def mean_cluster_wasserstein(labels, *, sensitive_features, sample_weight=None,
                             numeric_sensitive="auto", intersections=None,
                             wasserstein="principled", multioutput="uniform_average"):
    r"""Mean over clusters, each counting once, of the Wasserstein deviation (CW).

    .. math::

        CW_S = \frac{1}{k} \sum_C W(C_S, X_S)

    over the ``k`` non-empty clusters. Where AW weighs each cluster by its
    size, so that a small cluster's mix barely counts, CW reads the clusters
    one by one as a report's per-cluster bars show them: for a categorical
    attribute (and the default ``wasserstein="principled"``) it is the mean
    total-variation distance between a cluster's mix and the dataset's.
    """
    return _attribute_scores(mean_cluster_wasserstein_of, labels, sensitive_features,
                             sample_weight, numeric_sensitive, intersections, multioutput,
                             wasserstein=wasserstein)


@_measure_sections("Lower is fairer.")
def max_wasserstein(labels, *, sensitive_features, sample_weight=None, numeric_sensitive="auto",
                    intersections=None, wasserstein="principled", multioutput="uniform_average"):
    r"""Maximum Wasserstein fairness deviation (MW).

    .. math::

        MW_S = \max_C W(C_S, X_S)

    over the non-empty clusters.
    """
    return _attribute_scores(max_wasserstein_of, labels, sensitive_features, sample_weight,
                             numeric_sensitive, intersections, multioutput,
                             wasserstein=wasserstein)


@_measure_sections("In [0, 1]; higher is fairer.")
def balance(labels, *, sensitive_features, sample_weight=None, numeric_sensitive="auto",
            intersections=None, multioutput="uniform_average"):
    r"""Balance of Chierichetti et al. (2017), generalised to multi-valued attributes.

    For a binary attribute Chierichetti et al. define the balance of a cluster
    as :math:`\min(r/b, b/r)` for its counts *r* and *b* of the two groups,
    and the balance of a clustering as the minimum over clusters. With *t*
    values the cluster's balance is the smallest ratio between the counts of
    any two values, i.e. the smallest count over the largest, and the
    clustering's is the minimum over the non-empty clusters (the
    generalisation used by Ziko et al., 2019):

    .. math::

        balance_S = \min_C \frac{\min_s |C \cap S_s|}{\max_s |C \cap S_s|},

    where *s* ranges over the values observed in the dataset, so a cluster
    missing one of them has balance 0. It is at most the dataset's own
    min/max ratio, and equal to 1 for an attribute with a single observed
    value.

    %(categorical_only)s
    """
    return _attribute_scores(balance_of, labels, sensitive_features, sample_weight,
                             numeric_sensitive, intersections, multioutput, categorical_only=True)


@_measure_sections("Non-negative; 0 when every cluster has the dataset's mix.")
def kl_fairness_error(labels, *, sensitive_features, sample_weight=None, numeric_sensitive="auto",
                      intersections=None, eps=1e-20, multioutput="uniform_average"):
    r"""Fairness error of Ziko et al. (2019): summed KL divergence to the dataset's mix.

    .. math::

        KL_S = \sum_C \sum_s X_S(s) \log \frac{X_S(s)}{\max(C_S(s), \epsilon)}

    over the non-empty clusters, with natural logarithms. Every value *s*
    is observed in the dataset, so :math:`X_S(s) > 0`; a value absent from a
    cluster would make the divergence infinite, and like Ziko et al.'s
    evaluation code the cluster proportions are floored at ``eps`` (each such
    value then adds :math:`X_S(s) \log(X_S(s)/\epsilon)`, about
    :math:`46 X_S(s)` for the default). ``eps=0`` gives the exact divergence,
    ``inf`` when a value is missing from a cluster.

    %(categorical_only)s
    """
    return _attribute_scores(kl_fairness_error_of, labels, sensitive_features, sample_weight,
                             numeric_sensitive, intersections, multioutput, categorical_only=True,
                             eps=eps)


@_measure_sections("In proportion units; lower is fairer.")
def max_proportional_violation(labels, *, sensitive_features, sample_weight=None,
                               numeric_sensitive="auto", intersections=None, delta=0.2,
                               multioutput="uniform_average"):
    r"""Maximum proportional violation of the fairness bounds of Bera et al. (2019).

    Bera et al. require every cluster to hold each group *s* in a proportion
    between :math:`\beta_s = (1 - \delta) X_S(s)` and
    :math:`\alpha_s = X_S(s) / (1 - \delta)`. The violation of a cluster and
    value is how far its proportion lies outside that band, and the measure is
    the largest over non-empty clusters and values:

    .. math::

        MPV_S = \max_{C, s} \max\big(0,\; C_S(s) - \alpha_s,\;
                \beta_s - C_S(s)\big).

    It is 0 when every cluster satisfies the bounds; with ``delta=0`` it is
    the largest absolute gap :math:`|C_S(s) - X_S(s)|`.

    %(categorical_only)s
    """
    return _attribute_scores(max_proportional_violation_of, labels, sensitive_features,
                             sample_weight, numeric_sensitive, intersections, multioutput,
                             categorical_only=True, delta=delta)
