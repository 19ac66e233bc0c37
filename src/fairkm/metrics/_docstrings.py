"""One home for the docstring text that several measures share.

A docstring names a shared entry with a placeholder alone on its line,
``%(labels)s`` say, and :func:`fill_docstring` replaces it with the entry
indented like the placeholder. Only whole-line placeholders are replaced, so a
``%`` elsewhere in a docstring is left alone.
"""

from __future__ import annotations

import re
import textwrap

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
    "reference_labels": """\
reference_labels : array-like of shape (n_samples,)
    Labels of the reference clustering (e.g. S-blind K-Means).""",
    "sensitive_features": """\
sensitive_features : array-like of shape (n_samples,) or (n_samples, n_attributes), \
Series or DataFrame
    One column per sensitive attribute. A Series or DataFrame is paired with
    the rows by index label when the labels (or ``X``) are pandas objects,
    by position when they are arrays.""",
    "numeric_sensitive": """\
numeric_sensitive : "auto", bool or list of str or int, default="auto"
    Which attributes are numeric: ``"auto"`` treats float columns as
    numeric and all others as categorical, ``True``/``False`` makes every
    attribute numeric/categorical, and a list names (or gives the
    positions of) the numeric attributes.""",
    "sample_weight": """\
sample_weight : array-like of shape (n_samples,), default=None
    Row weights: finite, non-negative, not all zero. A row of weight w
    counts as w rows (integer weights give the result of repeating each row
    w times, zero weights that of dropping the rows). ``None`` (or all ones)
    weighs every row 1. A Series is paired with the rows by index label when
    the labels (or ``X``) are pandas objects.""",
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
    "deviation_kind": """\
deviation_kind : {"additive", "multiplicative"}, default="additive"
    How ``max_deviation`` reads: ``"additive"`` asks
    :math:`|C_S(s) - X_S(s)| \\le \\delta`, ``"multiplicative"`` (Bera et
    al.'s band, as MPV) asks :math:`(1 - \\delta) X_S(s) \\le C_S(s) \\le
    X_S(s) / (1 - \\delta)`, with :math:`\\delta` below 1.""",
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

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", flags=re.MULTILINE)


def fill_docstring(func, entries=None):
    """Replace the whole-line ``%(name)s`` placeholders of ``func.__doc__``.

    Parameters
    ----------
    func : callable
        Function whose docstring names entries of :data:`DOCSTRING_ENTRIES`.
    entries : dict of str to str, default=None
        Further entries, for text only one module can write (say, a list
        read from the table of measures).

    Returns
    -------
    callable
        ``func`` itself, its docstring filled in.

    Raises
    ------
    KeyError
        If a placeholder names no entry, so that a typo fails at import time.
    """
    known = DOCSTRING_ENTRIES if entries is None else {**DOCSTRING_ENTRIES, **entries}
    if func.__doc__ is not None:  # None under python -OO
        func.__doc__ = _PLACEHOLDER.sub(
            lambda match: textwrap.indent(known[match[2]], match[1]), func.__doc__
        )
    return func
