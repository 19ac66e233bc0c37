"""One home for the docstring text that several measures share.

A docstring names a shared entry with a placeholder alone on its line,
``%(labels)s`` say, and :func:`fill_docstring` replaces it with the entry
(``fairkm.utils._docstrings``: the inputs' entries, then these).
"""

from __future__ import annotations

from fairkm.utils._docstrings import INPUT_ENTRIES, docstring_filler

__all__ = ["DOCSTRING_ENTRIES", "fill_docstring"]

# Each entry is written as it would sit at column 0 of a docstring: a
# parameter line, then its description indented by four spaces.
DOCSTRING_ENTRIES = {
    "X": """\
X : array-like of shape (n_samples, n_features)
    Non-sensitive data.""",
    "labels": """\
labels : array-like of shape (n_samples,)
    Cluster labels.""",
    "sensitive_features": """\
sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
    One column per sensitive attribute. A Series or DataFrame is paired with
    the rows by index label when the labels (or ``X``) are pandas objects,
    by position when they are arrays.""",
    "intersections": """\
intersections : sequence of sequence of str, default=None
    Combinations of categorical attributes to measure as further
    attributes, such as ``[("sex", "race")]``: each adds an attribute named
    ``"sex & race"`` whose values are the observed combinations (see
    :func:`fairness_report` for how small combined groups behave).""",
    "multioutput": """\
multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
    ``"uniform_average"``: the mean over attributes (the paper's "mean
    across S attributes"); ``"raw_values"``: one value per attribute.""",
    "wasserstein": """\
wasserstein : {"principled", "published"}, default="principled"
    Wasserstein convention for AW/MW on categorical attributes; see the
    Notes of :func:`average_wasserstein`.""",
    "eps": """\
eps : float, default=1e-20
    Floor applied to the cluster proportions by KL
    (:func:`kl_fairness_error`), in [0, 1].""",
    "delta": """\
delta : float, default=0.2
    Slack of the bounds of MPV (:func:`max_proportional_violation`), in
    [0, 1); Bera et al.'s experiments use 0.2.""",
    "max_deviation": """\
max_deviation : float, dict or None, default=None
    A guarantee to check: every cluster's share of every value of every
    categorical attribute within this distance of the dataset's share
    (a float for all attributes, ``{name: float}`` for some), read as
    ``deviation_kind`` says; see :func:`fairkm.metrics.check_bounds`. None
    checks nothing.""",
    "fairness_returns": """\
float or ndarray of shape (n_attributes,)""",
    "categorical_only": """\
Not defined for numeric attributes: NaN under
``multioutput="raw_values"``, skipped in the average.""",
    "wasserstein_notes": r"""
The paper computes AW/MW "using Wasserstein distance in lieu of
Euclidean" without fixing the ground metric. With
``wasserstein="principled"`` a categorical attribute uses optimal transport
under the 0/1 ground metric (moving mass between any two distinct values
costs 1), which equals the total variation distance
:math:`\tfrac12 \sum_s |C_S(s) - X_S(s)|`, in [0, 1]. A numeric
attribute uses the 1-D Wasserstein-1 distance between the cluster's and
the dataset's empirical distributions of the standardised values.

``wasserstein="published"`` reproduces the convention behind the paper's
published tables: the two probability vectors are passed to
:func:`scipy.stats.wasserstein_distance` as samples (see
:func:`published_wasserstein`), which ignores which value each
probability belongs to. Numeric attributes are unaffected: their values
already are samples.""".strip("\n"),
}

# The two clusterings DevC and DevO compare.
DOCSTRING_ENTRIES["labels_and_reference"] = DOCSTRING_ENTRIES["labels"] + """
reference_labels : array-like of shape (n_samples,)
    Labels of the reference clustering (e.g. S-blind K-Means)."""

# The measures' docstrings: the inputs' entries, then the measures' own.
fill_docstring = docstring_filler(INPUT_ENTRIES, DOCSTRING_ENTRIES)
